// Thread: actor host
// The chat actors' bridge to the client's tools over the event channel (runs on the actor host). A call
// publishes `browser_tool_call` or `action_call` to the session's sockets and waits for the answer that the
// main thread signals back (ChannelSignal). An answer counts only once, only for its session, only from the
// user the turn belongs to and only for its kind; the call fails after BROWSER_TOOL_TIMEOUT_MS, when the
// session has no socket at all, or when the turn is aborted.
import { NoEventChannelError, type ClientToolBridge, type ClientToolCall } from './client-tools.js';
import type { ChannelSignal } from '../chat/channel-protocol.js';

export type Publish = (topic: string, event: string, data: unknown) => void;

export class ClientToolTimeoutError extends Error {
  constructor(kind: ClientToolCall['kind'], toolName: string, timeoutMs: number) {
    super(
      `The ${kind === 'action' ? 'action' : 'browser tool'} ${toolName} got no result from the client within ${timeoutMs} ms`,
    );
    this.name = 'ClientToolTimeoutError';
  }
}

export class ClientToolError extends Error {
  constructor(kind: ClientToolCall['kind'], toolName: string, problem: string) {
    super(`The ${kind === 'action' ? 'action' : 'browser tool'} ${toolName} failed on the client: ${problem}`);
    this.name = 'ClientToolError';
  }
}

interface PendingCall {
  readonly kind: ClientToolCall['kind'];
  readonly toolName: string;
  readonly userDid: string;
  settle(outcome: { output: string } | { error: Error }): void;
}

/** What the model sees of a client's result: text as is, anything else as JSON. */
export function outputOf(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result === undefined) return '';
  return JSON.stringify(result) ?? '';
}

/** The SDK answers a failed action with `result: { success: false, error }` (and `error` beside it). */
function actionFailure(result: unknown): string | undefined {
  if (typeof result !== 'object' || result === null || (result as { success?: unknown }).success !== false)
    return undefined;
  const error = (result as { error?: unknown }).error;
  return typeof error === 'string' && error ? error : 'the action reported success: false';
}

export class ChannelToolBridge implements ClientToolBridge {
  /** Keyed by session and tool call id: ids come from the model and need not be unique across sessions. */
  readonly #pending = new Map<string, PendingCall>();

  constructor(
    private readonly publish: Publish,
    private readonly timeoutMs: number,
  ) {}

  get pendingCount(): number {
    return this.#pending.size;
  }

  call({ kind, toolName, args, context }: ClientToolCall): Promise<string> {
    const key = `${context.sessionId}\0${context.toolCallId}`;
    return new Promise<string>((resolve, reject) => {
      if (context.signal.aborted) return reject(context.signal.reason);
      const settle: PendingCall['settle'] = (outcome) => {
        if (this.#pending.get(key) !== pending) return;
        this.#pending.delete(key);
        clearTimeout(timer);
        context.signal.removeEventListener('abort', onAbort);
        if ('error' in outcome) reject(outcome.error);
        else resolve(outcome.output);
      };
      const pending: PendingCall = { kind, toolName, userDid: context.userDid, settle };
      const onAbort = () =>
        settle({ error: context.signal.reason instanceof Error ? context.signal.reason : new Error('aborted') });
      const timer = setTimeout(
        () => settle({ error: new ClientToolTimeoutError(kind, toolName, this.timeoutMs) }),
        this.timeoutMs,
      );
      context.signal.addEventListener('abort', onAbort, { once: true });
      this.#pending.set(key, pending);
      const base = {
        sessionId: context.sessionId,
        requestId: context.requestId,
        toolCallId: context.toolCallId,
        toolName,
        args,
      };
      if (kind === 'browser') this.publish(context.sessionId, 'browser_tool_call', base);
      else this.publish(context.sessionId, 'action_call', { ...base, status: 'isRunning' });
    });
  }

  /** Applies an answer from the main thread; false when no call of this session, user and kind waits for it. */
  settle(sessionId: string, signal: ChannelSignal): boolean {
    const pending = this.#pending.get(`${sessionId}\0${signal.toolCallId}`);
    if (!pending) return false;
    if (signal.type === 'client_unreachable') {
      pending.settle({ error: new NoEventChannelError(pending.kind, pending.toolName) });
      return true;
    }
    if (signal.userDid !== pending.userDid || signal.kind !== pending.kind) return false;
    const problem = signal.error || (pending.kind === 'action' ? actionFailure(signal.result) : undefined);
    if (problem) pending.settle({ error: new ClientToolError(pending.kind, pending.toolName, problem) });
    else pending.settle({ output: outputOf(signal.result) });
    return true;
  }
}
