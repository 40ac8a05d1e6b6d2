// Thread: any
// One POST of JSON to an operator's endpoint, bounded in every way a bad upstream can stretch it: the
// whole call (connection retries included) within `timeoutMs`, the answer read to at most `maxBytes`, and every
// failure an outcome, never a throw. Used by the `http` action (answer awaited in the step) and the outbox.

/** What came of a call: the answer's JSON, or why there is none. */
export type CallResult =
  | { kind: 'ok'; status: number; json: unknown }
  | { kind: 'status'; status: number }
  | { kind: 'not_json'; status: number }
  | { kind: 'too_large'; status: number }
  | { kind: 'connection' }
  | { kind: 'timeout' };

export interface Call {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** The longest answer read; a longer one is cut off and counts as too large. */
  maxBytes: number;
}

/** The answer read at most (64 KiB): a screen shows under 200 characters of it. */
export const MAX_ANSWER_BYTES = 64 * 1024;

/** Failures before any answer: the call is tried again while its time lasts (50 ms, doubling to 400). */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
]);

const codeOf = (error: unknown): string | undefined => {
  const cause = (error as { cause?: { code?: string } } | undefined)?.cause;
  return cause?.code ?? (error as { code?: string } | undefined)?.code;
};

/** POSTs `call.body`; resolves with what came of it by `call.timeoutMs` at the latest. */
export async function postJson(call: Call): Promise<CallResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), call.timeoutMs);
  const started = Date.now();
  let pauseMs = 50;
  try {
    for (;;) {
      try {
        const response = await fetch(call.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json', ...call.headers },
          body: call.body,
          signal: controller.signal,
          redirect: 'error',
        });
        return await readAnswer(response, call.maxBytes);
      } catch (error) {
        if (controller.signal.aborted) return { kind: 'timeout' };
        const code = codeOf(error);
        if (code === undefined || !CONNECTION_CODES.has(code)) return { kind: 'connection' };
        if (Date.now() - started + pauseMs >= call.timeoutMs) return { kind: 'connection' };
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        pauseMs = Math.min(pauseMs * 2, 400);
      }
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The answer's body as JSON, read chunk by chunk and given up past `maxBytes` (the rest is never read). */
async function readAnswer(response: Response, maxBytes: number): Promise<CallResult> {
  const { status } = response;
  if (status < 200 || status > 299) {
    await response.body?.cancel().catch(() => {});
    return { kind: 'status', status };
  }
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    return { kind: 'too_large', status };
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => {});
        return { kind: 'too_large', status };
      }
      chunks.push(value);
    }
  }
  try {
    return { kind: 'ok', status, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { kind: 'not_json', status };
  }
}
