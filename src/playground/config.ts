// Thread: main
// PLAYGROUND_ENABLED: unset means "on outside production", so a production deployment never exposes the page
// unless asked to.
import * as v from 'valibot';
import { boolean } from '../base/env-schema.js';

export const playgroundEnv = {
  // The boolean parser without its default: unset stays undefined and follows NODE_ENV.
  PLAYGROUND_ENABLED: v.optional(boolean(false).wrapped),
};

export function playgroundEnabled(config: { PLAYGROUND_ENABLED?: boolean; NODE_ENV: string }): boolean {
  return config.PLAYGROUND_ENABLED ?? config.NODE_ENV !== 'production';
}
