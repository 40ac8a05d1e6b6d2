// Thread: main
// The event channel on the main thread, whatever the transport: who is connected to which session, the
// client events (answered here or signalled to the session's chat actor), and the fan-out of the events
// actors publish (actors.onEvent) to every socket of the session, through each transport's own pub/sub.
import type { Logger } from '../../base/log.js';
import { wsConnectionsActive, wsEventsSent } from '../../metrics/catalogue.js';
import { HostUnavailableError } from '../../runtime/errors.js';
import type { Actors } from '../../runtime/router.js';
import type { ActorEvent } from '../../runtime/messages.js';
import { CHAT_ACTOR, chatRefusal } from '../chat/chat-protocol.js';
import { SESSION_NOT_FOUND, wsErrorText } from '../chat-failures.js';
import type { SessionReads } from '../routes/session-reads.js';
import { CLIENT_CALL_EVENTS, payloads } from './catalogue.js';
import { CredentialWatch, type CredentialEnd } from './credential-watch.js';
import { ActionResultSchema, FrameError, parseData, SubscribeSchema, ToolResultSchema } from './frames.js';
import type { ChannelIdentity } from './handshake.js';
import type { ClientResultSignal, ClientUnreachableSignal } from '../chat/channel-protocol.js';

export type TransportName = 'websocket' | 'socket.io';

const eventsSent = { websocket: wsEventsSent.with('websocket'), 'socket.io': wsEventsSent.with('socket.io') };

/** Close code of a socket whose credential was revoked or expired (4000 + HTTP's 401); the reason says which. */
export const CREDENTIAL_ENDED = 4401;

/** Sessions one socket may follow besides its own. */
export const MAX_SUBSCRIPTIONS = 32;

/** One connected socket; each transport implements the four operations. */
export abstract class ChannelClient {
  /**
   * Sessions whose events this socket receives: its handshake session and those it subscribed to (at most
   * MAX_SUBSCRIPTIONS + 1). An array, not a Set: every idle socket holds one, and a Set costs ~150 bytes more;
   * replaced by concat rather than pushed to (push and spread reserve 17 slots, concat just the items).
   */
  subscriptions: readonly string[] = [];

  constructor(
    readonly transport: TransportName,
    readonly identity: ChannelIdentity,
  ) {}

  abstract send(event: string, data: unknown): void;
  /** Subscribes the socket to a session's events in the transport's pub/sub. */
  abstract join(sessionId: string): void;
  abstract close(code: number, reason: string): void;
  /** True while the socket does not read what it is sent: plain requests (ping, status, ...) wait unanswered. */
  get congested(): boolean {
    return false;
  }
}

/** Sends one event to every socket of a session on one transport. */
export type FanOut = (sessionId: string, event: string, data: unknown) => void;

/**
 * Cluster mode (src/cluster/event-bus.ts): which sessions this node has sockets for, so other nodes' events for
 * them reach it, and whether another node has sockets for one (before an actor is told no client can answer).
 */
export interface TopicInterest {
  /** Resolves once other nodes' events for the session reach this node. */
  follow(sessionId: string): Promise<void>;
  unfollow(sessionId: string): void;
  followedElsewhere(sessionId: string): Promise<boolean>;
}

export interface EventChannelDeps {
  readonly actors: Actors;
  /** Cluster mode only; on one node every socket is here. */
  readonly interest?: TopicInterest;
  /** Whose session it is, asked of the session's actor. */
  readonly sessions: SessionReads;
  readonly log: Logger;
}

export class EventChannel {
  /** sessionId -> transport -> sockets subscribed to it. */
  readonly #members = new Map<string, Map<TransportName, Set<ChannelClient>>>();
  readonly #clients = new Set<ChannelClient>();
  readonly #fanOuts = new Map<TransportName, FanOut>();
  /** No socket outlives its credential: closed when a revocation key of its chain is revoked, or when it expires. */
  readonly #credentials = new CredentialWatch<ChannelClient>((client, why) => EventChannel.#end(client, why));

  constructor(private readonly deps: EventChannelDeps) {}

  addTransport(name: TransportName, fanOut: FanOut): void {
    this.#fanOuts.set(name, fanOut);
  }

  get stats(): { activeSessions: number; totalConnections: number } {
    return { activeSessions: this.#members.size, totalConnections: this.#clients.size };
  }

  /** A socket passed its handshake: it follows its session and hears `connected`. */
  open(client: ChannelClient): void {
    // Expired or revoked during the handshake's awaits: ended as an open socket would be.
    const ended = this.#credentials.add(client);
    if (ended) return EventChannel.#end(client, ended);
    this.#clients.add(client);
    wsConnectionsActive.with(client.transport).inc();
    const following = this.#join(client, client.identity.sessionId);
    const connected = () =>
      this.#clients.has(client) && client.send('connected', payloads.connected(client.identity.sessionId));
    // In cluster mode `connected` waits until the session's events from other nodes reach this one.
    if (following) void following.then(connected);
    else connected();
  }

  close(client: ChannelClient): void {
    if (!this.#clients.delete(client)) return;
    this.#credentials.remove(client);
    wsConnectionsActive.with(client.transport).dec();
    for (const sessionId of client.subscriptions) {
      const byTransport = this.#members.get(sessionId);
      const sockets = byTransport?.get(client.transport);
      sockets?.delete(client);
      if (sockets?.size === 0) byTransport!.delete(client.transport);
      if (byTransport?.size === 0) {
        this.#members.delete(sessionId);
        this.deps.interest?.unfollow(sessionId);
      }
    }
  }

  /** One client event; problems are answered with an `error` event, never thrown (a throw would end the process). */
  receive(client: ChannelClient, event: string, data: unknown): void {
    const failed = (error: unknown) => {
      if (error instanceof FrameError) return client.send('error', payloads.error(error.message, error.event));
      this.deps.log.error({ err: error, event, sessionId: client.identity.sessionId }, 'client event failed');
      client.send('error', payloads.error(wsErrorText(error), event));
    };
    try {
      this.#dispatch(client, event, data)?.catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  /** An event an actor published: to every socket of the session, on every transport that has one. */
  publish({ topic, event, data }: ActorEvent): void {
    const byTransport = this.#members.get(topic);
    if (!byTransport) {
      // Nobody would answer: the call fails now instead of at its timeout.
      if (!CLIENT_CALL_EVENTS.has(event)) return;
      const { interest } = this.deps;
      if (!interest) return this.#unreachable(topic, data);
      void interest.followedElsewhere(topic).then((elsewhere) => elsewhere || this.#unreachable(topic, data));
      return;
    }
    for (const [transport, sockets] of byTransport) {
      this.#fanOuts.get(transport)?.(topic, event, data);
      eventsSent[transport].inc(sockets.size);
    }
  }

  /** A delegation was revoked (on this node, or in cluster mode on any): the sockets whose chain holds it close. */
  revoked(cid: string): void {
    this.#credentials.revoked(cid);
  }

  /** Closes every socket (shutdown). */
  closeAll(code: number, reason: string): void {
    for (const client of [...this.#clients]) client.close(code, reason);
  }

  /** An `error` event naming why, then the close (native: CREDENTIAL_ENDED and the same reason). */
  static #end(client: ChannelClient, why: CredentialEnd): void {
    client.send('error', payloads.error(why));
    client.close(CREDENTIAL_ENDED, why);
  }

  /** A promise when the answer waits for the session's actor (subscribe). */
  #dispatch(client: ChannelClient, event: string, data: unknown): Promise<void> | void {
    const { sessionId } = client.identity;
    switch (event) {
      case 'ping':
        if (!client.congested) client.send('pong', payloads.pong(sessionId));
        return;
      case 'status':
        if (!client.congested) client.send('status', payloads.status(sessionId, this.stats));
        return;
      case 'list-events':
        if (!client.congested) client.send('available-events', payloads.availableEvents(sessionId));
        return;
      case 'subscribe':
        return this.#subscribe(client, parseData(SubscribeSchema, data, event)?.sessionId ?? sessionId);
      case 'tool_result':
        return this.#result(client, 'browser', event, parseData(ToolResultSchema, data, event));
      case 'action_call_result':
        return this.#result(client, 'action', event, parseData(ActionResultSchema, data, event));
      default:
        throw new FrameError(`Unknown event ${JSON.stringify(event)}; send list-events for the catalogue`, event);
    }
  }

  async #subscribe(client: ChannelClient, sessionId: string): Promise<void> {
    if (!client.subscriptions.includes(sessionId)) {
      // Only the user's own sessions; the same answer for someone else's as for an unknown one.
      const owned = await this.deps.sessions.owns(sessionId, client.identity.userDid).catch((error: unknown) => {
        throw new FrameError(wsErrorText(error), 'subscribe');
      });
      if (!owned) throw new FrameError(wsErrorText(chatRefusal('session_not_found', SESSION_NOT_FOUND)), 'subscribe');
      if (client.subscriptions.length > MAX_SUBSCRIPTIONS)
        throw new FrameError(`At most ${MAX_SUBSCRIPTIONS} other sessions per socket`, 'subscribe');
      // The socket may have closed while the actor answered.
      if (!this.#clients.has(client)) return;
      await this.#join(client, sessionId);
    }
    client.send('subscribed', payloads.subscribed(sessionId, [...client.subscriptions]));
  }

  /** Adds the socket to the session's members; cluster mode: resolves once other nodes' events reach here. */
  #join(client: ChannelClient, sessionId: string): Promise<void> | undefined {
    if (!client.subscriptions.includes(sessionId)) client.subscriptions = client.subscriptions.concat(sessionId);
    let byTransport = this.#members.get(sessionId);
    if (!byTransport) this.#members.set(sessionId, (byTransport = new Map()));
    const following = this.deps.interest?.follow(sessionId);
    let sockets = byTransport.get(client.transport);
    if (!sockets) byTransport.set(client.transport, (sockets = new Set()));
    sockets.add(client);
    client.join(sessionId);
    return following;
  }

  /** A client's answer goes to the session's actor, which accepts it once, from this user, for a waiting call. */
  #result(
    client: ChannelClient,
    kind: ClientResultSignal['kind'],
    event: string,
    input: { toolCallId: string; result?: unknown; error?: string | null; sessionId?: string },
  ): void {
    const sessionId = input.sessionId ?? client.identity.sessionId;
    if (!client.subscriptions.includes(sessionId))
      throw new FrameError(`This socket does not follow session ${sessionId}`, event);
    const signal: ClientResultSignal = {
      type: 'client_result',
      kind,
      toolCallId: input.toolCallId,
      userDid: client.identity.userDid,
      result: input.result,
    };
    if (input.error) signal.error = input.error;
    this.deps.actors
      .ref(CHAT_ACTOR, sessionId)
      .signal(signal)
      .then(
        (accepted) => {
          if (accepted === true) return;
          const what = kind === 'browser' ? 'browser tool call' : 'action call';
          client.send(
            'error',
            payloads.error(
              `No ${what} ${input.toolCallId} of this session is waiting for a result (answered already, timed out, or unknown)`,
              event,
            ),
          );
        },
        (error: unknown) => {
          if (!(error instanceof HostUnavailableError))
            this.deps.log.error({ err: error, sessionId }, 'client result not delivered');
          client.send('error', payloads.error(wsErrorText(error), event));
        },
      );
  }

  #unreachable(sessionId: string, data: unknown): void {
    const toolCallId = (data as { toolCallId?: unknown } | null)?.toolCallId;
    if (typeof toolCallId !== 'string') return;
    const signal: ClientUnreachableSignal = { type: 'client_unreachable', toolCallId };
    this.deps.actors
      .ref(CHAT_ACTOR, sessionId)
      .signal(signal)
      .catch((error: unknown) => {
        if (!(error instanceof HostUnavailableError))
          this.deps.log.error({ err: error, sessionId }, 'unreachable client call not signalled');
      });
  }
}
