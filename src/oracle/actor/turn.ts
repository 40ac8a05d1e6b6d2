// Thread: actor host
// One turn of a chat session, inside the actor's mailbox: plugins' before-agent hooks (credits may refuse
// with 402 before anything is streamed), the agent loop with its frames, then the transcript and the
// session record committed (session-state.ts) before the stream is told how the turn ended. A streamed turn (a
// run) first stores itself, with its human message, as the session's open run (runs/open-runs.ts), so that a turn
// cut by its node's death can be taken over: a recovery runs it again from that stored message. The transcript
// still gets the human message and the answer in one commit, so a reader never sees a question without its turn,
// and a recovery whose turn was committed already (its node died just after) sends the stored answer instead of
// running it again: one answer is stored.
import { randomUUID } from 'node:crypto';
import { runAgent } from './agent/run.js';
import { SseFrameBuilder } from '../sse-frames.js';
import { prepareTurn } from './agent/turn.js';
import type { AgentResult, TurnContext } from '../chat/agent-types.js';
import { preciseNow, titleFrom, UNTITLED, type SessionRecord } from '../sessions/records.js';
import type { AiEntry, HumanEntry, TranscriptEntry } from '../sessions/transcript.js';
import { entryBytes } from '../sessions/bounds.js';
import type { SessionState } from './session-state.js';
import { TurnEvents } from './turn-events.js';
import { clientToolsOf } from './client-tools.js';
import { forModel } from '../chat/attachments.js';
import type { FrameSender } from './frame-sender.js';
import type { TurnMessage, TurnReply } from '../chat/chat-protocol.js';
import type { ChatServices } from './services.js';
import type { OpenRun } from '../runs/open-runs.js';
import type { Context } from '../../telemetry/index.js';

/** The generation in flight; aborting its controller stops the provider and the tools. */
export interface Generation {
  readonly turnId: string;
  /** Its TurnMessage's `at`. */
  readonly at?: number;
  readonly controller: AbortController;
}

export interface TurnInput {
  services: ChatServices;
  /** The session's stored state: its record, recent history, and where the turn is committed. */
  session: SessionState;
  request: TurnMessage;
  generation: Generation;
  /** The stream, when the client asked for one. */
  out?: FrameSender;
  /** Fires when the caller gave up: the turn is then not committed (the caller was told it failed). */
  cancelled?: AbortSignal;
  /** The open run this turn takes over (its node died mid-turn). */
  recovery?: OpenRun;
  /** Tracing on, in a recorded trace: the context of the actor span the turn runs in. */
  trace?: Context;
}

export interface TurnDone {
  reply: TurnReply;
}

const NOT_RUN: AgentResult = { text: '', reasoning: '', toolCalls: [], messages: [], steps: 0, aborted: true };

export async function runTurn({
  services,
  session: state,
  request,
  generation,
  out,
  cancelled,
  recovery,
  trace,
}: TurnInput): Promise<TurnDone> {
  const session = state.record;
  const signal = generation.controller.signal;
  const context: TurnContext = {
    userDid: request.userDid,
    oracleDid: request.oracleDid,
    sessionId: session.sessionId,
    requestId: request.requestId,
    signal,
    timezone: request.timezone,
    recovery: recovery !== undefined,
    ...(trace ? { trace } : {}),
  };
  // A turn that is stale before it starts answers at once and is not recorded (nothing was generated).
  if (signal.aborted) {
    await streamClosing(out, new SseFrameBuilder(session.sessionId, request.requestId), NOT_RUN);
    return { reply: { message: { type: 'ai', content: '', id: '' }, aborted: true } };
  }

  // A turn that could not be stored (a full disk) is refused before anything runs or is streamed.
  state.assertWritable();
  // A message that alone would fill the transcript is refused before any work (a JSON 413, even for a stream);
  // one whose answer would is refused when it is committed (SessionState.commit).
  state.admit(entryBytes(humanEntry(request, preciseNow())));
  const humanId = recovery?.humanId ?? request.humanId ?? randomUUID();
  if (recovery) {
    const committed = await state.committedTurn(humanId);
    if (committed) return replayCommitted(out, new SseFrameBuilder(session.sessionId, request.requestId), committed);
  }
  // A hook's refusal (credits: DomainError `credits_exhausted`) propagates before anything is streamed.
  const prepared = await prepareTurn({
    plugins: services.plugins,
    context,
    oracleName: request.oracleName,
    history: await state.history(),
    userMessage: request.message,
    attachments: request.attachments && forModel(request.attachments, request.homeServer),
    // MCP tools before the client's: a declared tool cannot take the name of a configured one.
    clientTools: [...(await services.mcp.toolsFor(request)), ...clientToolsOf(request, services.bridge)],
  });

  // A run is stored as open (with its message): from here a node's death leaves a turn to take over.
  if (out && !recovery) {
    await services.openRuns.put({
      runId: request.turnId,
      sessionId: session.sessionId,
      userDid: request.userDid,
      requestId: request.requestId,
      humanId,
      turn: request,
      attempt: 1,
    });
  }

  const frames = new SseFrameBuilder(session.sessionId, request.requestId);
  // The same turn, told to the session's sockets (event channel).
  const events = new TurnEvents(services.publish, session.sessionId, request.requestId, request.agActions);
  events.route('agent');
  if (out) {
    out.open();
    await out.send(frames.start());
  }
  const result = await runAgent({
    provider: services.provider(request.model),
    messages: prepared.messages,
    tools: prepared.tools,
    context,
    maxSteps: services.maxSteps,
    onEvent: (event) => {
      const frame = frames.frame(event);
      events.agentEvent(event, frame);
      return out?.send(frame);
    },
  });

  cancelled?.throwIfAborted();
  const ai = await commit(state, request, result, humanId);
  events.stored();
  await streamClosing(out, frames, result);

  const reply: TurnReply = { message: { type: 'ai', content: result.text, id: ai?.id ?? '' } };
  if (result.aborted) reply.aborted = true;
  if (result.error !== undefined) reply.error = result.error;
  if (request.returnAllMessages) reply.messages = await state.allMessages();
  return { reply };
}

/** A recovered turn that its first node committed before it died: its stored answer is the run's new answer. */
async function replayCommitted(
  out: FrameSender | undefined,
  frames: SseFrameBuilder,
  { answer }: { answer?: AiEntry },
): Promise<TurnDone> {
  if (out) {
    out.open();
    await out.send(frames.start());
    if (answer?.content) await out.send(frames.frame({ type: 'message', delta: answer.content }));
  }
  const result: AgentResult = { ...NOT_RUN, text: answer?.content ?? '', aborted: answer?.aborted === true };
  if (answer?.error !== undefined) result.error = answer.error;
  await streamClosing(out, frames, result);
  return { reply: { message: { type: 'ai', content: result.text, id: answer?.id ?? '' } } };
}

/** Ends the stream with the turn's outcome; the relay writes the closing frames (stream-ending.ts). */
async function streamClosing(
  out: FrameSender | undefined,
  frames: SseFrameBuilder,
  result: AgentResult,
): Promise<void> {
  if (!out) return;
  if (!out.opened) {
    out.open();
    await out.send(frames.start());
  }
  const { sessionId, requestId } = frames;
  const partialText = result.aborted || result.error !== undefined ? result.text : undefined;
  out.end({
    type: 'turn',
    sessionId,
    requestId,
    aborted: result.aborted,
    error: result.error,
    errorSent: frames.failed,
    partialText,
  });
}

/** The transcript entry of the user's message. */
function humanEntry(request: TurnMessage, now: number, id: string = randomUUID()): HumanEntry {
  const human: HumanEntry = { id, type: 'human', content: request.message, createdAt: now };
  if (request.attachments?.length) human.attachments = request.attachments;
  if (request.homeServer !== undefined && request.attachments?.length) human.homeServer = request.homeServer;
  return human;
}

/**
 * Stores the user's message (its entry id `humanId`: a recovery's check) and the answer (an answer with nothing in
 * it, after an abort or a failure before any output, is left out) and moves the session to the top of the user's
 * list.
 */
async function commit(
  state: SessionState,
  request: TurnMessage,
  result: AgentResult,
  humanId: string,
): Promise<AiEntry | undefined> {
  const session = state.record;
  const now = preciseNow();
  const human = humanEntry(request, now, humanId);
  let ai: AiEntry | undefined;
  if (result.text || result.toolCalls.length > 0 || result.messages.length > 0) {
    ai = {
      id: randomUUID(),
      type: 'ai',
      content: result.text,
      toolCalls: result.toolCalls,
      chat: result.messages,
      createdAt: now,
    };
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
  await state.commit(next, added);
  return ai;
}
