// A real OTLP/HTTP traces receiver on 127.0.0.1 for the tracing tests: it decodes each export request with the
// official OpenTelemetry protos (test/fixtures/otlp/, copied from opentelemetry-proto at ac2c4b5) and keeps the
// spans. Waiting is by event: waitFor settles when a batch arrives that makes its check true.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import protobuf from 'protobufjs';

const PROTOS = join(import.meta.dirname, '..', 'fixtures', 'otlp');

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  /** The W3C tracestate the span carried ('' for none). */
  traceState: string;
  attributes: Record<string, unknown>;
  /** The resource's attributes (service.name, thread.name, service.instance.id). */
  resource: Record<string, unknown>;
  startMs: number;
  endMs: number;
  links: { traceId: string; spanId: string }[];
}

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: { toNumber(): number } | number;
  doubleValue?: number;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}

function decodedValue(value: AnyValue | undefined): unknown {
  if (!value) return undefined;
  // Decoded fields are the message's own properties; the defaults of the others sit on its prototype.
  const has = (field: keyof AnyValue) => Object.hasOwn(value, field);
  if (has('intValue')) return typeof value.intValue === 'number' ? value.intValue : value.intValue!.toNumber();
  if (has('doubleValue')) return value.doubleValue;
  if (has('boolValue')) return value.boolValue;
  return value.stringValue;
}

const attributesOf = (list: KeyValue[] = []) => Object.fromEntries(list.map((kv) => [kv.key, decodedValue(kv.value)]));
const hex = (bytes: Uint8Array | undefined) => Buffer.from(bytes ?? []).toString('hex');
const ms = (nanos: { toString(): string } | number) => Number(BigInt(nanos.toString()) / 1000n) / 1000;

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Export requests received (any path). */
  requests = 0;
  readonly #waiters = new Set<() => void>();

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => join(PROTOS, target);
    root.loadSync('opentelemetry/proto/collector/trace/v1/trace_service.proto');
    const Request = root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest');
    let receiver: OtlpReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        receiver!.requests++;
        const decoded = Request.decode(Buffer.concat(chunks)) as unknown as {
          resourceSpans: {
            resource?: { attributes: KeyValue[] };
            scopeSpans: {
              spans: (Record<string, unknown> & {
                traceId: Uint8Array;
                spanId: Uint8Array;
                parentSpanId: Uint8Array;
                name: string;
                kind: number;
                traceState: string;
                attributes: KeyValue[];
                startTimeUnixNano: number;
                endTimeUnixNano: number;
                links: { traceId: Uint8Array; spanId: Uint8Array }[];
              })[];
            }[];
          }[];
        };
        for (const resourceSpans of decoded.resourceSpans) {
          const resource = attributesOf(resourceSpans.resource?.attributes);
          for (const scope of resourceSpans.scopeSpans)
            for (const span of scope.spans)
              receiver!.spans.push({
                traceId: hex(span.traceId),
                spanId: hex(span.spanId),
                parentSpanId: hex(span.parentSpanId),
                name: span.name,
                kind: span.kind,
                traceState: span.traceState ?? '',
                attributes: attributesOf(span.attributes),
                resource,
                startMs: ms(span.startTimeUnixNano),
                endMs: ms(span.endTimeUnixNano),
                links: (span.links ?? []).map((link) => ({ traceId: hex(link.traceId), spanId: hex(link.spanId) })),
              });
        }
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        for (const wake of [...receiver!.#waiters]) wake();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  /** Resolves with the spans once `check` holds for them (checked now and on each batch); rejects after `timeoutMs`. */
  waitFor(what: string, check: (spans: ReceivedSpan[]) => boolean, timeoutMs = 20_000): Promise<ReceivedSpan[]> {
    if (check(this.spans)) return Promise.resolve(this.spans);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        reject(new Error(`timed out waiting for ${what}; spans: ${this.spans.map((s) => s.name).join(', ')}`));
      }, timeoutMs);
      const wake = () => {
        if (!check(this.spans)) return;
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve(this.spans);
      };
      this.#waiters.add(wake);
    });
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
