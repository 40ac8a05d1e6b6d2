// Thread: actor host
// The chat session actor: one per session, on the actor host its id hashes to. It owns the session record
// and the transcript, runs one generation at a time (the mailbox), and commits every turn to its store before
// the reply completes. Signals (outside the mailbox) abort the generation in flight.
import type { MessagePort } from 'node:worker_threads';
import { actorKind, type Actor } from '../../runtime/actor-host.js';
import { DomainError, transientOf } from '../../runtime/errors.js';
import { SESSION_NOT_FOUND } from '../chat-failures.js';
import { preciseNow, viewOf, UNTITLED, type SessionRecord } from '../sessions/records.js';
import { SessionLimitError } from '../sessions/repository.js';
import type { HistoryPage, MessagesPart } from '../sessions/transcript.js';
import { SessionState } from './session-state.js';
import { isRevisionConflict } from '../../store/revision.js';
import { isChannelSignal, type ChannelSignal } from '../chat/channel-protocol.js';
import { FrameSender } from './frame-sender.js';
import {
  CHAT_ACTOR,
  chatRefusal,
  type AbortSignalMessage,
  type ChatActorMessage,
  type ChatShape,
  type CreateReply,
  type CreateSessionMessage,
  type DeleteReply,
  type DeleteSessionMessage,
  isSessionRead,
  type SessionReadMessage,
  type TurnMessage,
  type TurnReply,
  type RecoverReply,
  type RecoverRunMessage,
  type RunAliveMessage,
  type TurnAnswerMessage,
  type TurnAnswerReply,
} from '../chat/chat-protocol.js';
import { chatServices, HISTORY_TURNS, type ChatServices } from './services.js';
import { failedEnding } from '../stream-ending.js';
import { runTurn, type Generation } from './turn.js';
import { STREAM_WINDOW } from '../chat/chat-protocol.js';
import type { OpenRun } from '../runs/open-runs.js';
import { claimRun } from './run-recovery.js';
import type { Context } from '../../telemetry/index.js';

const notFound = () => chatRefusal('session_not_found', SESSION_NOT_FOUND);

class ChatActor implements Actor<ChatShape> {
  /** undefined until loaded; null when the session does not exist. */
  #session: SessionState | null | undefined;
  #current: Generation | undefined;
  /** The newest turn a message announced (signal `supersededBy`, and when); older queued turns do not run. */
  #latestTurn: { turnId: string; at?: number } | undefined;

  constructor(
    private readonly sessionId: string,
    private readonly services: ChatServices,
  ) {}

  async receive(
    request: ChatActorMessage,
    cancelled?: AbortSignal,
    trace?: Context,
  ): Promise<ChatShape['calls']['reply']> {
    switch (request.type) {
      case 'create':
        return this.#create(request, cancelled);
      case 'delete':
        return this.#delete(request, cancelled);
      case 'turn':
        return this.#turn(request, undefined, cancelled, undefined, trace);
      case 'recover':
        return this.#recover(request);
      case 'turn-answer':
        return this.#turnAnswer(request);
      case 'owns':
      case 'messages':
      case 'history':
        await this.#load();
        return this.#read(request);
    }
  }

  async stream(turn: TurnMessage, port: MessagePort, cancelled?: AbortSignal, trace?: Context): Promise<void> {
    const { keptRuns } = this.services;
    const info = { runId: turn.turnId, sessionId: this.sessionId, userDid: turn.userDid, requestId: turn.requestId };
    const run = keptRuns?.writer(info);
    const sender = new FrameSender(port, () => this.#abort(turn.turnId), STREAM_WINDOW, run);
    try {
      await this.#turn(turn, sender, cancelled, undefined, trace);
    } catch (error) {
      // A refusal, or a failure that passes (failureKind), is an answer: before the stream opened it is handed back
      // as data and the main thread answers it; after (a transcript full once the answer is in) it ends the stream.
      // A full disk is told once, by the storage watch (store/writable.ts).
      const transient = transientOf(error);
      if (transient && transient.code !== 'storage_unavailable')
        this.services.log.warn({ err: error, sessionId: this.sessionId }, 'chat turn failed for now');
      else if (!transient && !(error instanceof DomainError))
        this.services.log.error({ err: error, sessionId: this.sessionId }, 'chat turn failed');
      const refusal = error instanceof DomainError ? error : transient;
      if (refusal && !sender.opened) return sender.refuse(refusal);
      if (!sender.opened) throw error;
      sender.end(failedEnding(error));
    } finally {
      sender.end();
      await run?.settled();
      // Its `done` is kept: no longer a turn to take over.
      if (sender.opened) await this.#closeOpenRun(turn.turnId);
    }
  }

  /** Cluster mode: takes over the run `runId` whose node died mid-turn (run-recovery.ts). */
  async #recover(request: RecoverRunMessage): Promise<RecoverReply> {
    // The turn running here is the run's own attempt, alive: nothing to take over.
    if (this.#current?.turnId === request.runId) return { outcome: 'none' };
    const session = await this.#load();
    const claim = await claimRun(this.services, this.sessionId, request, session?.record.userDid === request.userDid);
    if (claim.kind !== 'claimed') return { outcome: claim.kind };
    const sender = new FrameSender(undefined, () => undefined, STREAM_WINDOW, claim.writer);
    try {
      await this.#turn(claim.open.turn, sender, undefined, claim.open);
    } catch (error) {
      this.services.log.error({ err: error, sessionId: this.sessionId }, 'a recovered chat turn failed');
      sender.end(failedEnding(error));
    } finally {
      sender.end();
      await claim.writer.settled();
      await this.#closeOpenRun(request.runId);
    }
    return { outcome: 'recovered' };
  }

  /** A hosted turn's stored answer; cluster mode: a turn cut by its node's death is taken over first. */
  async #turnAnswer({ userDid, turnId }: TurnAnswerMessage): Promise<TurnAnswerReply> {
    const committed = async () => {
      const session = await this.#load();
      return session?.record.userDid === userDid ? session.committedTurn(turnId) : undefined;
    };
    let turn = await committed();
    const open = !turn && this.services.keptRuns ? await this.services.openRuns.get(this.sessionId) : undefined;
    if (open?.value.runId === turnId) {
      await this.#recover({ type: 'recover', userDid, runId: turnId });
      turn = await committed();
    }
    if (!turn) return { found: false, answer: null };
    const answer = turn.answer;
    const ok = answer !== undefined && !answer.aborted && answer.error === undefined && answer.content !== '';
    return { found: true, answer: ok ? answer.content : null };
  }

  async #closeOpenRun(runId: string): Promise<void> {
    await this.services.openRuns
      .remove(this.sessionId, runId)
      .catch((error: unknown) => this.services.log.warn({ err: error, runId }, 'an open run was not removed'));
  }

  signal(
    request: AbortSignalMessage | ChannelSignal | SessionReadMessage | RunAliveMessage,
  ): ChatShape['signals']['reply'] {
    // A client's answer to a browser tool or action this session's turn waits for.
    if (isChannelSignal(request)) return this.services.bridge.settle(this.sessionId, request);
    // A kept run's reader asks whether its turn runs here (src/cluster/records/oracle/runs/run-reader.ts).
    if (request.type === 'run-alive') return this.#current?.turnId === request.runId;
    // Answered from the state in memory, beside a turn in the mailbox; not loaded yet: the caller sends a call.
    // Only while it is current: the store vouches for it, or a turn runs (it refreshed the state when it started);
    // otherwise (another node may have written since) the caller's call refreshes it.
    if (isSessionRead(request)) {
      const held = this.#session;
      const current = held && (this.#current !== undefined || held.current);
      return current ? this.#read(request) : Promise.resolve(undefined);
    }
    if (request.type !== 'abort' || this.#session?.record.userDid !== request.userDid) return false;
    if (request.supersededBy) {
      // An announcement older than one already seen (delivered late, after a failover) changes nothing.
      if (isBefore(request.at, this.#latestTurn?.at)) return false;
      this.#latestTurn = { turnId: request.supersededBy, at: request.at };
    }
    const current = this.#current;
    if (!current || (request.turnId && request.turnId !== current.turnId)) return false;
    // A turn's own announcement, or one older than it, arriving after it started does not stop it.
    if (request.supersededBy === current.turnId || isBefore(request.at, current.at)) return false;
    current.controller.abort();
    return true;
  }

  isIdle(): boolean {
    return this.#current === undefined;
  }

  /**
   * Runs in the mailbox only, so two loads never race. A state held is kept while the store vouches for it (one
   * node); otherwise the session's partition may have moved away and back since this actor last ran, with another
   * node writing meanwhile, so every message re-reads the record (refreshed: one read) and keeps the recent
   * transcript only when the revision did not move. No session held (or none stored): read.
   */
  async #load(): Promise<SessionState | null> {
    const held = this.#session;
    if (held) return (this.#session = await held.refreshed());
    return (this.#session = await SessionState.load(this.services, this.sessionId, HISTORY_TURNS));
  }

  #read(request: SessionReadMessage): Promise<boolean> | Promise<MessagesPart> | Promise<HistoryPage> {
    const owned = this.#session?.record.userDid === request.userDid ? this.#session : undefined;
    if (request.type === 'owns') return Promise.resolve(owned !== undefined);
    if (!owned) return Promise.reject<HistoryPage>(notFound());
    return request.type === 'messages' ? owned.messagesPart(request.from) : owned.historyPage(request);
  }

  #abort(turnId: string): void {
    if (this.#current?.turnId === turnId) this.#current.controller.abort();
  }

  async #create(request: CreateSessionMessage, cancelled?: AbortSignal): Promise<CreateReply> {
    if (await this.#load()) throw chatRefusal('session_exists', 'Session already exists');
    const now = preciseNow();
    const record: SessionRecord = {
      sessionId: this.sessionId,
      userDid: request.userDid,
      oracleDid: request.oracleDid,
      oracleName: request.oracleName,
      title: UNTITLED,
      createdAt: now,
      lastUpdatedAt: now,
    };
    cancelled?.throwIfAborted();
    try {
      this.#session = await SessionState.create(this.services, record, HISTORY_TURNS);
    } catch (error) {
      if (!(error instanceof SessionLimitError)) throw error;
      throw chatRefusal(
        'session_limit',
        `Session limit reached: a user may hold at most ${error.limit} chat sessions; delete one (DELETE /sessions/:sessionId) to create another`,
        { limit: error.limit },
      );
    }
    return { session: viewOf(record) };
  }

  async #delete(request: DeleteSessionMessage, cancelled?: AbortSignal): Promise<DeleteReply> {
    const session = await this.#load();
    if (!session || session.record.userDid !== request.userDid) throw notFound();
    cancelled?.throwIfAborted();
    await session.delete();
    this.#session = null;
    return { deleted: true };
  }

  async #turn(
    request: TurnMessage,
    out?: FrameSender,
    cancelled?: AbortSignal,
    recovery?: OpenRun,
    trace?: Context,
  ): Promise<TurnReply> {
    out?.started();
    const session = await this.#load();
    if (!session || session.record.userDid !== request.userDid) throw notFound();
    const generation: Generation = { turnId: request.turnId, at: request.at, controller: new AbortController() };
    // A newer message arrived while this one waited, or its client left: it ends before it starts.
    const latest = this.#latestTurn;
    const superseded = latest !== undefined && latest.turnId !== request.turnId && !isBefore(latest.at, request.at);
    const stale = superseded || out?.cancelled;
    if (stale) generation.controller.abort();
    this.#current = generation;
    // A caller that gave up stops the generation too; runTurn then commits nothing.
    const stop = () => generation.controller.abort();
    cancelled?.addEventListener('abort', stop, { once: true });
    try {
      const input = { services: this.services, session, request, generation, out, cancelled, recovery, trace };
      const done = await runTurn(input);
      return done.reply;
    } catch (error) {
      // Another writer moved the session (a stale owner in cluster mode): forget it, the next message reloads it.
      if (isRevisionConflict(error)) this.#session = undefined;
      throw error;
    } finally {
      cancelled?.removeEventListener('abort', stop);
      if (this.#current === generation) this.#current = undefined;
    }
  }
}

export const chatActorKind = actorKind(
  CHAT_ACTOR,
  (sessionId, host) => new ChatActor(sessionId, chatServices.of(host)),
  chatServices.prepare,
);

/** Whether time `a` is known to be before `b` (either unknown: not known, as before turns carried their time). */
function isBefore(a: number | undefined, b: number | undefined): boolean {
  return a !== undefined && b !== undefined && a < b;
}
