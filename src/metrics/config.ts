// Thread: main
// Environment variables of /metrics (validated with the others in src/app/config.ts).
import { boolean } from '../base/env-schema.js';

export const metricsEnv = {
  /** false: no /metrics route, no per-request timing and no reports from the actor hosts. */
  METRICS_ENABLED: boolean(true),
  /** true: /metrics is served to anyone, without the operator guard. */
  METRICS_PUBLIC: boolean(false),
};
