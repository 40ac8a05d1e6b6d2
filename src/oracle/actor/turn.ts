// Runs on: actor hosts (worker threads) only.
// One turn of a chat session, inside the actor's mailbox: plugins' before-agent hooks (credits may refuse
// with 402 before anything is streamed), the agent loop with its frames, then the transcript and the
// session record committed in one LMDB transaction before the stream is told how the turn ended.
import { randomUUID } from 'node:crypto';
import { runAgent } from './agent/run.js';
import { encodeSseFrame, SseFrameBuilder } from '../sse-frames.js';
import { prepareTurn } from './agent/turn.js';
import type { AgentResult, TurnContext } from '../agent-types.js';
import { preciseNow, titleFrom, UNTITLED, writeSession, type SessionRecord } from '../sessions/records.js';
import { appendEntries, historyOf, itemOf, type AiEntry, type HumanEntry, type TranscriptEntry } from '../sessions/transcript.js';
import { TurnEvents } from './turn-events.js';
import { clientToolsOf } from './client-tools.js';
import type { FrameSender } from './frame-sender.js';
import type { TurnMessage, TurnReply } from '../chat-protocol.js';
import { HISTORY_TURNS, type ChatServices } from './services.js';

/** The generation in flight; aborting its controller stops the provider and the tools. */
export interface Generation {
  readonly turnId: string;
  readonly controller: AbortController;
}

export interface TurnInput {
  services: ChatServices;
  session: SessionRecord;
  /** The transcript so far; the turn's entries are appended once committed. */
  entries: TranscriptEntry[];
  request: TurnMessage;
  generation: Generation;
  /** The stream, when the client asked for one. */
  out?: FrameSender;
  /** Fires when the caller gave up: the turn is then not committed (the caller was told it failed). */
  cancelled?: AbortSignal;
}

export interface TurnDone {
  reply: TurnReply;
  /** The session record after the turn, when it changed. */
  session?: SessionRecord;
}

const NOT_RUN: AgentResult = { text: '', reasoning: '', toolCalls: [], messages: [], steps: 0, aborted: true };

export async function runTurn({ services, session, entries, request, generation, out, cancelled }: TurnInput): Promise<TurnDone> {
  const signal = generation.controller.signal;
  const context: TurnContext = {
    userDid: request.userDid,
    oracleDid: request.oracleDid,
    sessionId: session.sessionId,
    requestId: request.requestId,
    signal,
    timezone: request.timezone,
  };
  // A turn that is stale before it starts answers at once and is not recorded (nothing was generated).
  if (signal.aborted) {
    await streamClosing(out, new SseFrameBuilder(session.sessionId, request.requestId), NOT_RUN);
    return { reply: { message: { type: 'ai', content: '', id: '' }, aborted: true } };
  }

  // A hook's refusal (credits: DomainError `credits_exhausted`) propagates before anything is streamed.
  const prepared = await prepareTurn({
    plugins: services.plugins,
    context,
    oracleName: request.oracleName,
    history: historyOf(entries, HISTORY_TURNS),
    userMessage: request.message,
    // MCP tools before the client's: a declared tool cannot take the name of a configured one.
    clientTools: [...(await services.mcp.toolsFor(request)), ...clientToolsOf(request, services.bridge)],
  });

  const frames = new SseFrameBuilder(session.sessionId, request.requestId);
  // The same turn, told to the session's sockets (event channel).
  const events = new TurnEvents(services.publish, session.sessionId, request.requestId, request.agActions);
  events.route('agent');
  if (out) {
    out.open();
    await out.send(encodeSseFrame(frames.start()));
  }
  const result = await runAgent({
    provider: services.provider,
    messages: prepared.messages,
    tools: prepared.tools,
    context,
    maxSteps: services.maxSteps,
    onEvent: (event) => {
      const frame = frames.frame(event);
      events.agentEvent(event, frame);
      return out?.send(encodeSseFrame(frame));
    },
  });

  cancelled?.throwIfAborted();
  const { next, ai } = await commit(services, session, entries, request, result);
  events.stored();
  await streamClosing(out, frames, result);

  const reply: TurnReply = { message: { type: 'ai', content: result.text, id: ai?.id ?? '' } };
  if (result.aborted) reply.aborted = true;
  if (result.error !== undefined) reply.error = result.error;
  if (request.returnAllMessages) reply.messages = entries.map(itemOf);
  return { reply, session: next };
}

/** Ends the stream with the turn's outcome; the relay writes the closing frames (stream-ending.ts). */
async function streamClosing(out: FrameSender | undefined, frames: SseFrameBuilder, result: AgentResult): Promise<void> {
  if (!out) return;
  if (!out.opened) {
    out.open();
    await out.send(encodeSseFrame(frames.start()));
  }
  const { sessionId, requestId } = frames;
  out.end({ type: 'turn', sessionId, requestId, aborted: result.aborted, error: result.error, errorSent: frames.failed });
}

/**
 * Stores the user's message and the answer (an answer with nothing in it, after an abort or a failure
 * before any output, is left out) and moves the session to the top of the user's list.
 */
async function commit(services: ChatServices, session: SessionRecord, entries: TranscriptEntry[], request: TurnMessage, result: AgentResult) {
  const now = preciseNow();
  const human: HumanEntry = { id: randomUUID(), type: 'human', content: request.message, createdAt: now };
  let ai: AiEntry | undefined;
  if (result.text || result.toolCalls.length > 0 || result.messages.length > 0) {
    ai = { id: randomUUID(), type: 'ai', content: result.text, toolCalls: result.toolCalls, chat: result.messages, createdAt: now };
    if (result.reasoning) ai.reasoning = result.reasoning;
    if (result.aborted) ai.aborted = true;
    if (result.error !== undefined) ai.error = result.error;
  }
  const added: TranscriptEntry[] = ai ? [human, ai] : [human];
  const next: SessionRecord = {
    ...session,
    lastUpdatedAt: Math.max(now, session.lastUpdatedAt + 0.001),
    title: session.title === UNTITLED ? titleFrom(request.message) : session.title,
  };
  await services.root.transaction(() => {
    writeSession(services.sessions, next, session);
    appendEntries(services.transcripts, session.sessionId, entries.length, added);
  });
  entries.push(...added);
  return { next, ai };
}
