// Thread: any (pure)
// The standard OpenTelemetry variables this server reads itself. Tracing is on when an OTLP
// endpoint is set, off (no SDK loaded) otherwise. The SDK's own variables (OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_BSP_*) are read by the SDK from the process environment.
import * as v from 'valibot';
import { oneOf, text } from '../base/env-schema.js';

export const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

const url = v.optional(
  v.pipe(v.string(), v.trim(), v.regex(/^https?:\/\/[^\s]+$/, 'must be an http:// or https:// URL')),
);

export const telemetryEnv = {
  /** OTLP/HTTP base URL (http://collector:4318): traces go to <it>/v1/traces. Unset (and no traces endpoint): off. */
  OTEL_EXPORTER_OTLP_ENDPOINT: url,
  /** The full OTLP/HTTP traces URL; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url,
  /** The resource's service.name. */
  OTEL_SERVICE_NAME: text('session-actor-runtime'),
  OTEL_TRACES_SAMPLER: oneOf(SAMPLERS, 'parentbased_always_on'),
  /** The ratio of the traceidratio samplers, 0 to 1. */
  OTEL_TRACES_SAMPLER_ARG: v.optional(
    v.pipe(
      v.string(),
      v.trim(),
      v.regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, 'must be a number from 0 to 1'),
      v.transform(Number),
    ),
    '1',
  ),
};

export interface TelemetryConfig {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?: string;
  OTEL_SERVICE_NAME: string;
  OTEL_TRACES_SAMPLER: SamplerName;
  OTEL_TRACES_SAMPLER_ARG: number;
}

/** The traces URL, or undefined when tracing is off. */
export function tracesUrl(config: TelemetryConfig): string | undefined {
  if (config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}
