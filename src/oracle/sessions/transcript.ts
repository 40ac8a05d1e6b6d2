// The transcript of a chat session in the LMDB database `oracle-transcripts`, one entry per message:
//   <sessionId>|<sequence, 10 digits> -> TranscriptEntry
// An ai entry keeps the provider messages of its turn (assistant and tool messages) so the history sent
// to the model on later turns is exactly what the model produced, tool calls and results included.
import type { Database } from 'lmdb';
import type { Store } from '../../store/env.js';
import type { ChatMessage, CompletedToolCall } from '../agent-types.js';

export interface HumanEntry {
  id: string;
  type: 'human';
  content: string;
  createdAt: number;
}

export interface AiEntry {
  id: string;
  type: 'ai';
  content: string;
  reasoning?: string;
  toolCalls: CompletedToolCall[];
  /** The turn's messages as the provider saw them. */
  chat: ChatMessage[];
  /** Set when the generation was stopped or failed. */
  aborted?: boolean;
  error?: string;
  createdAt: number;
}

export type TranscriptEntry = HumanEntry | AiEntry;

/** A message as `GET /messages/:sessionId` lists it (oracle-wire-format.md). */
export interface MessageItem {
  id: string;
  type: 'ai' | 'human';
  content: string;
  toolCalls?: { name: string; args: Record<string, unknown>; id: string; output?: string; status?: 'done' | 'error' }[];
  reasoning?: string;
  isComplete: true;
  isReasoning: false;
}

export type TranscriptDb = Database<TranscriptEntry, string>;

export const openTranscriptDb = (store: Store): TranscriptDb => store.db<TranscriptEntry>('oracle-transcripts');

const prefixOf = (sessionId: string) => `${sessionId}|`;
const keyOf = (sessionId: string, sequence: number) => `${prefixOf(sessionId)}${String(sequence).padStart(10, '0')}`;

export function readTranscript(db: TranscriptDb, sessionId: string): TranscriptEntry[] {
  const prefix = prefixOf(sessionId);
  return [...db.getRange({ start: prefix, end: `${prefix}\uffff` }).map(({ value }) => value)];
}

/** Appends entries after `count` existing ones. Call inside a transaction. */
export function appendEntries(db: TranscriptDb, sessionId: string, count: number, entries: readonly TranscriptEntry[]): void {
  entries.forEach((entry, i) => db.put(keyOf(sessionId, count + i), entry));
}

/** Removes every entry of the session. Call inside a transaction. */
export function deleteTranscript(db: TranscriptDb, sessionId: string): void {
  const prefix = prefixOf(sessionId);
  for (const key of db.getKeys({ start: prefix, end: `${prefix}\uffff` })) db.remove(key);
}

export function itemOf(entry: TranscriptEntry): MessageItem {
  if (entry.type === 'human') return { id: entry.id, type: 'human', content: entry.content, isComplete: true, isReasoning: false };
  const item: MessageItem = {
    id: entry.id,
    type: 'ai',
    content: entry.content,
    toolCalls: entry.toolCalls.map((call) => ({ name: call.name, args: call.args, id: call.id, output: call.output, status: call.status })),
    isComplete: true,
    isReasoning: false,
  };
  if (entry.reasoning) item.reasoning = entry.reasoning;
  return item;
}

/**
 * The conversation for the provider: the last `maxTurns` turns, cut at a user message so every tool call
 * keeps its result.
 */
export function historyOf(entries: readonly TranscriptEntry[], maxTurns: number): ChatMessage[] {
  let start = 0;
  let turns = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].type !== 'human') continue;
    if (++turns > maxTurns) break;
    start = i;
  }
  const history: ChatMessage[] = [];
  for (const entry of entries.slice(start)) {
    if (entry.type === 'human') history.push({ role: 'user', content: entry.content });
    else history.push(...entry.chat);
  }
  return history;
}
