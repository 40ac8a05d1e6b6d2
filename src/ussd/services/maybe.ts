// Thread: actor host
/** A value now or later: most steps never wait, and a promise per step costs a microtask turn and a frame. */
export type Maybe<T> = T | Promise<T>;

export function andThen<T, U>(value: Maybe<T>, next: (value: T) => Maybe<U>): Maybe<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}
