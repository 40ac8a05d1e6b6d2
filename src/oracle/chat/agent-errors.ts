// Thread: any (shared, pure: no state of its own)
// Errors of the agent layer. Their messages are shown to the user in the SSE `error` frame, so they say
// what failed without leaking secrets (never the API key).

/** The model server answered with an error status, an error event, or could not be reached. */
export class ProviderError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ProviderError';
  }
}

/** The loop ran `maxSteps` provider calls and the model still asked for tools. */
export class StepLimitError extends Error {
  constructor(readonly maxSteps: number) {
    super(`The agent stopped after ${maxSteps} steps without a final answer`);
    this.name = 'StepLimitError';
  }
}

/** An abort (fetch's, or throwIfAborted's): the turn was stopped, not failed. By the DOMException's code, not a name. */
export function isAbortError(error: unknown): boolean {
  return error instanceof DOMException && error.code === DOMException.ABORT_ERR;
}

/** Throws the signal's reason as an AbortError (what fetch does), so callers test one shape. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new DOMException('The generation was aborted', 'AbortError');
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A failed tool call's result as the model sees it. */
export const TOOL_ERROR_PREFIX = 'Error: ';

export function toolErrorContent(message: string): string {
  return `${TOOL_ERROR_PREFIX}${message}`;
}
