// Thread: main
// Actor events across nodes. An actor publishes an event for a topic (a chat session) on the node it
// runs on; the sockets following that session may be connected to any node. This node's own events reach its
// listeners directly (as on one node) and are published on `<prefix>.events.<topic>`; a node subscribes to a topic's
// subject only while it has sockets following the topic (follow/unfollow, called by the event channel), so an event
// crosses the network only to nodes that have someone to give it to. Its own events coming back over that
// subscription are dropped (each message names the bus that published it), so a local socket hears each event once.
//
// Whether anyone follows a topic elsewhere (before an actor is told its browser-tool call has no client) is asked
// with a request on the same subject: every follower answers, no responders means nobody does.
import { nuid, TimeoutError, type Msg, type Subscription } from '@nats-io/transport-node';
import type { ActorEvent } from '../runtime/messages.js';
import type { ClusterConnection } from './connection.js';
import { encodeKey } from './keys.js';

/** Where this node's actor events come from (the local runtime). */
export interface EventSource {
  onEvent(listener: (event: ActorEvent) => void): () => void;
}

/** An event on the wire: the publishing bus, and the event. */
interface WireEvent extends ActorEvent {
  from: string;
}

/** How long a node waits for another to say it follows a topic; no answer in time counts as "followed". */
const PROBE_TIMEOUT_MS = 1_000;
/** The longest a socket's `connected` waits for NATS to confirm its session's subscription. */
const FOLLOW_CONFIRM_MS = 1_000;
/** How long "nobody follows" is asked again before it is believed, and how often. */
const NOBODY_SETTLE_MS = 250;
const NOBODY_RETRY_MS = 25;

export class ClusterEventBus {
  readonly #connection: ClusterConnection;
  readonly #id = nuid.next();
  readonly #listeners = new Set<(event: ActorEvent) => void>();
  readonly #followed = new Map<string, { subscription: Subscription; ready: Promise<void> }>();
  readonly #stopLocal: () => void;

  constructor(connection: ClusterConnection, local: EventSource) {
    this.#connection = connection;
    this.#stopLocal = local.onEvent((event) => {
      this.#dispatch(event);
      const { nc } = this.#connection;
      if (!nc.isClosed())
        nc.publish(this.subjectOf(event.topic), JSON.stringify({ ...event, from: this.#id } satisfies WireEvent));
    });
  }

  /** Every event of this node's actors, and those of other nodes' actors for the topics this node follows. */
  onEvent(listener: (event: ActorEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  subjectOf(topic: string): string {
    return `${this.#connection.prefix}.events.${encodeKey([topic])}`;
  }

  /**
   * This node has sockets following `topic`: other nodes' events for it come here from now on. Resolves once this
   * node's NATS server has the subscription (it answered a PING sent after it; the server passes the interest on
   * to the other servers as it takes it), or after FOLLOW_CONFIRM_MS without NATS: the socket is told it is
   * connected then, so that a turn it starts at once on another node is not published before anyone here listens.
   */
  follow(topic: string): Promise<void> {
    const known = this.#followed.get(topic);
    if (known) return known.ready;
    const { nc } = this.#connection;
    if (nc.isClosed()) return Promise.resolve();
    const subscription = nc.subscribe(this.subjectOf(topic), {
      callback: (error, msg) => {
        if (!error) this.#received(msg);
      },
    });
    const ready = Promise.race([
      nc.flush().catch(() => undefined),
      new Promise<void>((resolve) => setTimeout(resolve, FOLLOW_CONFIRM_MS).unref()),
    ]);
    this.#followed.set(topic, { subscription, ready });
    return ready;
  }

  /** The last socket following `topic` here left. */
  unfollow(topic: string): void {
    this.#followed.get(topic)?.subscription.unsubscribe();
    this.#followed.delete(topic);
  }

  /**
   * Whether another node has sockets following `topic` (a timeout counts as yes: nobody is told "unreachable" on a
   * guess). "Nobody" is asked again for a moment: the interest of a socket that has just followed on another node
   * crosses the NATS routes to this node's server a moment after that node's own server took it.
   */
  async followedElsewhere(topic: string): Promise<boolean> {
    const settledAt = performance.now() + NOBODY_SETTLE_MS;
    for (;;) {
      try {
        await this.#connection.nc.request(this.subjectOf(topic), this.#id, { timeout: PROBE_TIMEOUT_MS });
        return true;
      } catch (error) {
        if (error instanceof TimeoutError) return true;
        if (performance.now() >= settledAt) return false;
        await new Promise((resolve) => setTimeout(resolve, NOBODY_RETRY_MS));
      }
    }
  }

  close(): void {
    this.#stopLocal();
    for (const topic of [...this.#followed.keys()]) this.unfollow(topic);
    this.#listeners.clear();
  }

  #received(msg: Msg): void {
    // A probe from a node asking whether anyone here follows the topic: this subscription is the answer.
    if (msg.reply) return void msg.respond();
    const { from, ...event } = msg.json<WireEvent>();
    if (from !== this.#id) this.#dispatch(event);
  }

  #dispatch(event: ActorEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}
