// Thread: any
// A promise bounded in time. The promise runs on after the bound; its late outcome is ignored
// (handled, so a late rejection is not an unhandled one).

/** `promise`'s outcome, or a rejection with `timedOut()` once `ms` have passed, whichever comes first. */
export function within<T>(promise: Promise<T>, ms: number, timedOut: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(timedOut()), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });
}
