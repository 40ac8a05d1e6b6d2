// Thread: main
// An actor stream between two nodes over core NATS. The caller (the node that took the HTTP request)
// picks two subjects under a fresh inbox: `<inbox>.out` carries what the actor writes, in order, then how its stream
// handler ended; `<inbox>.in` carries the caller's control messages (acknowledgements, cancel), its pings and its
// close. The owner (the node running the actor) opens the stream on its own runtime and relays between the two, so
// the acknowledgement window works end to end: a slow reader on the caller holds the actor back on the owner.
//
// Core NATS keeps the order of one connection's messages to another, but drops what is in flight when a NATS server
// dies, so every message carries a sequence number and a gap fails the stream instead of leaving a hole in it
// (runtime/sequenced-stream.ts; the credit is the relayed stream's own, end to end).
// The owner may hear of the stream (over the node link) before the caller's subscription has crossed the route
// between their NATS servers, and the caller before the owner's has: either's first messages would then be dropped.
// So the caller's first word is a ping, asked again while nobody answers it, and the owner holds its messages until
// it heard the caller: that ping came over the same route as the caller's subscription, after it, so the owner's
// server knows where `<inbox>.out` goes by then (routes keep their order).
//
// Liveness, both ways: the caller pings the owner every pingMs (a request on `<inbox>.in`, answered with the
// owner's last sequence number) until `done` settles. "No responders" to any ping but the first (the owner's
// connection is gone: kill -9; the first is asked again for up to silentMs, as above) or
// no answer within silentMs fails `done` with HostUnavailableError; so a dead owner is noticed within pingMs plus a
// round trip, a hung one within pingMs + silentMs. The owner cancels the actor's stream when the caller closes
// before the stream ended (client gone), or when it heard nothing from the caller for silentMs (its node died).
import { createInbox, TimeoutError, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { ActorStream } from '../runtime/router.js';
import { SequenceIn, SequenceOut } from '../runtime/sequenced-stream.js';
import type { StreamChannel } from '../runtime/stream-channel.js';
import { fromWire, toWire, type WireError } from '../runtime/wire-errors.js';
import { isNoResponders } from './no-responders.js';
import { unavailable } from './unavailable.js';

export interface StreamLiveness {
  /** How often the caller pings the owner (default 1 s). */
  pingMs: number;
  /** A side that heard nothing from the other for this long gives the stream up (default 3 s). */
  silentMs: number;
}

export const DEFAULT_STREAM_LIVENESS: StreamLiveness = { pingMs: 1_000, silentMs: 3_000 };

/** How soon the caller's first ping is asked again when nobody answers it yet (the owner's subscription is on its way). */
const GREETING_RETRY_MS = 5;

/** What the caller tells the owner when it asks for the stream (part of the open request). */
export interface StreamOpen extends StreamLiveness {
  inbox: string;
}

/** Owner -> caller, on `<inbox>.out`. */
type OutMessage = { s: number; m: unknown } | { s: number; done: true } | { s: number; error: WireError };
/** Caller -> owner, on `<inbox>.in` (a ping is a request with an empty body, answered with the last `s` sent). */
type InMessage = { s: number; m: unknown } | { close: true };

/**
 * The caller's end: returns at once; `open` asks the owner for the stream (routing, retries) and resolves once
 * the owner relays. Control messages posted before that wait for it.
 */
export function openRemoteStream(
  nc: NatsConnection,
  liveness: StreamLiveness,
  open: (request: StreamOpen) => Promise<unknown>,
): ActorStream {
  const caller = new CallerEnd(nc, createInbox(), liveness);
  open({ inbox: caller.inbox, ...liveness }).then(
    () => caller.opened(),
    (error: unknown) => caller.fail(error),
  );
  return { channel: caller, done: caller.done };
}

class CallerEnd implements StreamChannel {
  readonly done: Promise<void>;
  #resolve!: () => void;
  #reject!: (error: unknown) => void;
  #settled = false;
  #closed = false;
  /** Control messages posted before the owner answered the first ping; undefined once it did. */
  #queued: unknown[] | undefined = [];
  #listeners: ((message: unknown) => void)[] = [];
  /** Messages that arrived before the first listener (a MessagePort holds them the same way). */
  #early: unknown[] = [];
  /** The owner's messages, in order. */
  readonly #received = new SequenceIn();
  /** This end's control messages. */
  readonly #sent = new SequenceOut();
  #ping: NodeJS.Timeout | undefined;
  readonly #out: Subscription;

  constructor(
    private readonly nc: NatsConnection,
    readonly inbox: string,
    private readonly liveness: StreamLiveness,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    // Subscribed before the open request leaves (the same connection, so the owner's first frame finds it).
    this.#out = nc.subscribe(`${inbox}.out`, {
      callback: (error, msg) => {
        if (!error) this.#arrived(msg.json<OutMessage>());
      },
    });
  }

  on<M = unknown>(_event: 'message', listener: (message: M) => void): this {
    this.#listeners.push(listener as (message: unknown) => void);
    for (const message of this.#early.splice(0)) this.#deliver(message);
    return this;
  }

  postMessage(message: unknown): void {
    if (this.#closed) return;
    if (this.#queued) this.#queued.push(message);
    else this.#publish({ s: this.#sent.take(), m: message });
  }

  /** The reader is done: the owner cancels the actor's stream if it has not ended. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (!this.#queued) this.#publish({ close: true });
    this.#release();
  }

  /** The owner relays: greet it (the first ping, asked until it answers), then send what waited and ping on. */
  opened(): void {
    this.#askOwner(performance.now());
  }

  #greeted(): void {
    const queued = this.#queued ?? [];
    this.#queued = undefined;
    if (this.#closed) return this.#publish({ close: true });
    for (const message of queued) this.#publish({ s: this.#sent.take(), m: message });
    if (!this.#settled) this.#schedulePing();
  }

  fail(error: unknown): void {
    this.#settle(() => this.#reject(error));
  }

  #arrived(message: OutMessage): void {
    if (this.#settled && !('m' in message)) return;
    const after = this.#received.expected - 1;
    if (this.#received.take(message.s).kind !== 'next')
      return this.fail(unavailable(`stream lost messages in transit (got ${message.s} after ${after})`));
    if ('m' in message) {
      if (this.#closed) return;
      if (this.#listeners.length === 0) this.#early.push(message.m);
      else this.#deliver(message.m);
    }
    // How the handler ended may come before its port's last messages (numbered after it): they are still taken.
    else if ('done' in message) this.#settle(() => this.#resolve());
    else this.fail(fromWire(message.error));
  }

  #deliver(message: unknown): void {
    for (const listener of this.#listeners) listener(message);
  }

  #settle(how: () => void): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#ping);
    how();
    this.#release();
  }

  /** Drops the subscription once nothing more is wanted from it: the reader closed and `done` settled. */
  #release(): void {
    if (this.#closed && this.#settled && !this.#out.isClosed()) this.#out.unsubscribe();
  }

  #schedulePing(): void {
    this.#ping = setTimeout(() => this.#askOwner(), this.liveness.pingMs);
    this.#ping.unref();
  }

  /**
   * Pings the owner. The first ping (`greetingSince`: when it was first asked) is asked again while nobody answers
   * it, for at most silentMs: the owner's subscription may still be on its way to this node's server.
   */
  #askOwner(greetingSince?: number): void {
    this.nc.request(`${this.inbox}.in`, undefined, { timeout: this.liveness.silentMs }).then(
      (reply) => {
        if (this.#settled) return;
        // The owner's last message left before its answer (same connection pair): later than ours means lost.
        const last = Number(reply.string());
        const arrived = this.#received.expected - 1;
        if (last > arrived)
          return this.fail(unavailable(`stream lost messages in transit (owner sent ${last}, ${arrived} arrived)`));
        if (greetingSince === undefined) this.#schedulePing();
        else this.#greeted();
      },
      (error: Error) => {
        if (this.#settled) return;
        const greeting = greetingSince !== undefined && performance.now() - greetingSince < this.liveness.silentMs;
        if (greeting && isNoResponders(error)) {
          this.#ping = setTimeout(() => this.#askOwner(greetingSince), GREETING_RETRY_MS);
          return void this.#ping.unref();
        }
        const silent = error instanceof TimeoutError;
        this.fail(
          unavailable(
            silent
              ? `the stream's node did not answer within ${this.liveness.silentMs} ms`
              : `the stream's node is gone (${error.message})`,
          ),
        );
      },
    );
  }

  #publish(message: InMessage): void {
    if (!this.nc.isClosed()) this.nc.publish(`${this.inbox}.in`, JSON.stringify(message));
  }
}

/**
 * The owner's end: relays the local stream `local` to the caller of `open`. `cancel` is the control message that
 * stops a stream (posted to the actor when the caller left before the end). Call after the open is accepted.
 */
export function relayToCaller(nc: NatsConnection, open: StreamOpen, local: ActorStream, cancel: unknown): void {
  const sent = new SequenceOut();
  const received = new SequenceIn();
  let ended = false;
  let callerGone = false;
  let heardAt = performance.now();
  /** What waits for the caller's first word (bounded: the actor writes no further than its window without acks). */
  let held: Omit<OutMessage, 's'>[] | undefined = [];
  const out = (message: Omit<OutMessage, 's'>) => {
    if (held) held.push(message);
    else if (!nc.isClosed()) nc.publish(`${open.inbox}.out`, JSON.stringify({ s: sent.take(), ...message }));
  };
  const heard = () => {
    const waiting = held ?? [];
    held = undefined;
    for (const message of waiting) out(message);
  };
  const leave = () => {
    if (callerGone) return;
    callerGone = true;
    if (!ended) local.channel.postMessage(cancel);
    local.channel.close();
    cleanUp();
  };
  const cleanUp = () => {
    if (!ended || !callerGone) return;
    clearInterval(watchdog);
    if (!inbound.isClosed()) inbound.unsubscribe();
  };
  const inbound = nc.subscribe(`${open.inbox}.in`, {
    callback: (error, msg: Msg) => {
      if (error || callerGone) return;
      heardAt = performance.now();
      // A ping is answered with what left before it; what was held leaves after the answer.
      if (msg.reply) return void (msg.respond(String(sent.next - 1)), heard());
      heard();
      const message = msg.json<InMessage>();
      if ('close' in message) return leave();
      // A lost control message (an acknowledgement, a cancel) would stall or run on: give up instead.
      if (received.take(message.s).kind !== 'next') return leave();
      local.channel.postMessage(message.m);
    },
  });
  const watchdog = setInterval(() => performance.now() - heardAt > open.silentMs && leave(), open.pingMs);
  watchdog.unref();
  local.channel.on('message', (message) => out({ m: message }));
  local.done
    .then(
      () => out({ done: true }),
      (error: unknown) => out({ error: toWire(error) }),
    )
    .finally(() => {
      ended = true;
      cleanUp();
    });
}
