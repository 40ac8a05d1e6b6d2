// Thread: any (pure: the state of one end of one stream)
// The sequenced, credit-based stream that every frame transport is an adapter of: the worker port (the actor's
// frame sender and the front door's relay: oracle/actor/frame-sender.ts, oracle/routes/stream-relay.ts), the node
// link (cluster/remote-stream.ts) and the runs stream (cluster/records/oracle/runs/). One place decides:
//   - numbers: a sender numbers what it sends on from its first (SequenceOut), one number per item (a frame, a
//     message), a batch by the number of its first item;
//   - gaps: a receiver takes items only in order (SequenceIn): a batch starting past the next number is a gap,
//     which ends the stream (the reader re-joins, or the stream fails), and items it had already are skipped;
//   - credit: a sender has at most `window` items unacknowledged (Credit) and waits past it; the receiver grants
//     credit back every `every` items its sink took, and none while the sink is full (CreditGrant), so a slow
//     reader holds its producer back across every hop instead of filling memory;
//   - end: where the frames' last batch says how the stream ended (a kept run), nothing new is taken after it
//     (SequenceIn.end); on a port, the end is a message of its own (the frames' closing batch with it).

/** A sender's numbering. */
export class SequenceOut {
  #next: number;

  constructor(first = 1) {
    this.#next = first;
  }

  /** The number the next item gets. */
  get next(): number {
    return this.#next;
  }

  /** Numbers `count` items: the number of the first. */
  take(count = 1): number {
    const first = this.#next;
    this.#next += count;
    return first;
  }
}

/** What a receiver makes of `count` items numbered from `first`. */
export type Arrival =
  /** In order: the first `skip` of them were had already (a re-read), the rest are new. */
  | { kind: 'next'; skip: number }
  /** Every one of them was had already. */
  | { kind: 'seen' }
  /** One or more before them never came (or they came after the end): the stream cannot go on. */
  | { kind: 'gap' };

/** A receiver's check of the numbers. */
export class SequenceIn {
  #expected: number;
  #ended = false;

  constructor(first = 1) {
    this.#expected = first;
  }

  /** The number the next new item must have. */
  get expected(): number {
    return this.#expected;
  }

  get ended(): boolean {
    return this.#ended;
  }

  /** Takes `count` items numbered from `first` (see Arrival); after `end`, anything new is a gap. */
  take(first: number, count = 1): Arrival {
    if (first > this.#expected) return { kind: 'gap' };
    const skip = this.#expected - first;
    if (skip >= count) return { kind: 'seen' };
    if (this.#ended) return { kind: 'gap' };
    this.#expected = first + count;
    return { kind: 'next', skip };
  }

  /** The stream ended with what was taken last. */
  end(): void {
    this.#ended = true;
  }
}

/** A sender's credit: how many items it may still send before it waits. */
export class Credit {
  #sent = 0;
  #granted = 0;
  #released = false;
  #wake: (() => void) | undefined;

  constructor(private readonly window: number) {}

  /** No room: the next item waits (until a grant, or `release`). */
  get full(): boolean {
    return !this.#released && this.#sent - this.#granted >= this.window;
  }

  sent(count = 1): void {
    this.#sent += count;
  }

  /** The receiver took `total` items so far (grants count from the start, so a lost or late one is made up). */
  granted(total: number): void {
    this.#granted = Math.max(this.#granted, total);
    this.#wakeUp();
  }

  /** Nothing waits for credit any more (the reader is gone, or the stream goes on without it). */
  release(): void {
    this.#released = true;
    this.#wakeUp();
  }

  /** Resolves at the next grant or release (call while `full`). */
  room(): Promise<void> {
    return new Promise<void>((resolve) => (this.#wake = resolve));
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** A receiver's grants: every `every` items its sink took, none while the sink is full, the rest once it drains. */
export class CreditGrant {
  #took = 0;
  #granted = 0;
  #blocked = false;

  constructor(
    private readonly every: number,
    /** Sends a grant of `total` items to the sender. */
    private readonly grant: (total: number) => void,
  ) {}

  /** The sink is full: no grants until `drained`. */
  get blocked(): boolean {
    return this.#blocked;
  }

  /** The sink took `count` items; `ok` false: it is full now. */
  took(count: number, ok = true): void {
    this.#took += count;
    if (!ok) this.#blocked = true;
    if (!this.#blocked && this.#took - this.#granted >= this.every) this.#send();
  }

  /** The sink has room again: what it took meanwhile is granted. */
  drained(): void {
    this.#blocked = false;
    this.#send();
  }

  #send(): void {
    if (this.#took > this.#granted) this.grant((this.#granted = this.#took));
  }
}
