// Thread: any
// The `ask` state (docs/ussd-ask.md). What the user types on it is a chat turn to
// the oracle under the account's did:key; the session keeps the turn it waits for and then the answer, as two
// reserved values of its draft, so the screen (the prompt, `working`, or the answer paged) is the one the step
// committed, and a gateway retry or a later page reads it back.
import { createHash } from 'node:crypto';
import type { CompiledState } from './compile.js';
import type { Lookup } from './render.js';
import { fill } from './template.js';

/** The session values of an ask state: the turn it waits for, then the answer it shows. */
export const ASK_TURN = 'ask.turn';
export const ASK_ANSWER = 'ask.answer';

/**
 * What a step on an ask state asks the front door for: one chat turn to run, or (no `question`) the answer of the
 * turn the session waits for, asked before (its front door may have died since).
 */
export interface AskRequest {
  turnId: string;
  /** The account asking and the service: a late answer its session no longer waits for is kept on the account. */
  customerId: string;
  serviceId: string;
  /** The question; absent: the turn was asked before and only its answer is wanted. */
  question?: string;
  /** The account's did:key: the oracle keeps the chat session and preferences under it. */
  userDid: string;
  /** The phone's chat session in this service (chatSessionIdOf). */
  chatSessionId: string;
  model?: string;
  /** How long the step waits for the answer before `working` shows. */
  budgetMs?: number;
}

/** The turn a step asked for, before the actor adds the account's identity. */
export type AskedTurn = Omit<AskRequest, 'userDid' | 'chatSessionId' | 'customerId' | 'serviceId'>;

/**
 * The oracle's chat turns as this face uses them (oracle/chat/phone-turns.ts, linked by the server): `ask` runs one as
 * `userDid` in chat session `sessionId`, `find` reads the answer of one asked before (waiting while it runs). The
 * answer's text, null when it failed or is not known, undefined when the oracle could not tell (ask again later).
 */
export interface AskAgent {
  ask(turn: {
    userDid: string;
    sessionId: string;
    turnId: string;
    message: string;
    model?: string;
  }): Promise<string | null | undefined>;
  find(turn: { userDid: string; sessionId: string; turnId: string }): Promise<string | null | undefined>;
}

/** A dial's answer when its step asked the agent: the screen if the answer comes late, and the turn to run. */
export interface AskNeeded {
  screen: string;
  ask: AskRequest;
}

export const isAskNeeded = (reply: unknown): reply is AskNeeded =>
  typeof reply === 'object' && reply !== null && 'ask' in reply;

/** The body of an ask state's screen: the answer, `working` while the turn runs, else undefined (the prompt). */
export function askBody(state: CompiledState, l: number, lookup: Lookup): string | undefined {
  if (!state.ask) return undefined;
  const answer = lookup(ASK_ANSWER);
  if (answer !== undefined) return answer;
  return lookup(ASK_TURN) === undefined ? undefined : fill(state.ask.working[l] ?? '', lookup);
}

/** Longest word of an answer kept whole: paging splits lines at spaces, so longer ones (a URL) are cut. */
const LONGEST_WORD = 60;

/** An agent's answer as a screen's text: blank lines and runs of spaces dropped, long words cut. */
export function answerText(answer: string): string {
  return answer
    .split('\n')
    .map((line) =>
      line
        .split(/\s+/)
        .filter((word) => word !== '')
        .flatMap((word) => (word.length <= LONGEST_WORD ? [word] : (word.match(/.{1,60}/gu) ?? [])))
        .join(' '),
    )
    .filter((line) => line !== '')
    .join('\n');
}

/** The chat session of one account in one service: the same on every dial, so the agent remembers the talk. */
export function chatSessionIdOf(userDid: string, serviceId: string): string {
  return `ussd-${createHash('sha256').update(`${userDid}|${serviceId}`).digest('hex').slice(0, 32)}`;
}
