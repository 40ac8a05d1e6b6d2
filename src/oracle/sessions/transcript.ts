// Thread: any
// The entries of a chat session's transcript, what GET /messages lists of them, and
// the history the model gets. Stored behind TranscriptRepository (transcript-repository.ts).
// An ai entry keeps the provider messages of its turn (assistant and tool messages) so the history sent
// to the model on later turns is exactly what the model produced, tool calls and results included.
import type { ChatMessage, CompletedToolCall } from '../chat/agent-types.js';
import { forModel, type Attachment } from '../chat/attachments.js';

/** A user's message for the provider, its attachments with it. */
export function userMessage(
  content: string,
  attachments: readonly Attachment[] | undefined,
  homeServer: string | undefined,
): ChatMessage {
  return attachments?.length
    ? { role: 'user', content, attachments: forModel(attachments, homeServer) }
    : { role: 'user', content };
}

export interface HumanEntry {
  id: string;
  type: 'human';
  content: string;
  attachments?: Attachment[];
  /** The user's homeserver when the message was sent: where its attachments' media are. */
  homeServer?: string;
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
  toolCalls?: {
    name: string;
    args: Record<string, unknown>;
    id: string;
    output?: string;
    status?: 'done' | 'error';
    interrupted?: true;
  }[];
  /** An ai item of a turn that was stopped or failed: as `done` of its stream said (sse-frames.ts doneFrame). */
  status?: 'aborted' | 'failed';
  aborted?: true;
  failed?: true;
  reasoning?: string;
  /** Human items with attachments: all of them, and the first alone (for clients that read only `attachment`). */
  attachments?: Attachment[];
  attachment?: Attachment;
  isComplete: true;
  isReasoning: false;
}

/** One page of GET /messages' list, oldest first. */
export interface MessagesPage {
  messages: MessageItem[];
  /** The entry number the next page starts at; absent after the last. */
  next?: number;
}

/**
 * One part of GET /messages' list as the answer streams it, oldest first: `count` items as JSON, comma-separated,
 * about a bounded number of bytes (at least one item), so a read holds one part at a time however long the
 * transcript.
 */
export interface MessagesPart {
  json: string;
  count: number;
  /** The entry number the next part starts at; absent after the last. */
  next?: number;
}

/**
 * One page of `GET /sessions/:id/messages` (the client SDK's shape), oldest first. Cursors are entry numbers
 * as strings: `prevCursor` asks for what precedes the page (`before`), `nextCursor` for what follows it
 * (`after`), also on the newest page, so a client can ask for what was said since.
 */
export interface HistoryPage {
  messages: MessageItem[];
  prevCursor: string | null;
  nextCursor: string | null;
  hasOlder: boolean;
  hasNewer: boolean;
}

export function itemOf(entry: TranscriptEntry): MessageItem {
  if (entry.type === 'human') {
    const item: MessageItem = {
      id: entry.id,
      type: 'human',
      content: entry.content,
      isComplete: true,
      isReasoning: false,
    };
    if (entry.attachments?.length)
      Object.assign(item, { attachments: entry.attachments, attachment: entry.attachments[0] });
    return item;
  }
  const item: MessageItem = {
    id: entry.id,
    type: 'ai',
    content: entry.content,
    toolCalls: entry.toolCalls.map((call) => {
      const item = { name: call.name, args: call.args, id: call.id, output: call.output, status: call.status };
      return call.interrupted ? { ...item, interrupted: true as const } : item;
    }),
    isComplete: true,
    isReasoning: false,
  };
  if (entry.aborted) Object.assign(item, { status: 'aborted', aborted: true });
  else if (entry.error !== undefined) Object.assign(item, { status: 'failed', failed: true });
  if (entry.reasoning) item.reasoning = entry.reasoning;
  return item;
}

/**
 * Where the last `maxTurns` turns of `entries` (oldest first) begin: at a user message, so every tool call
 * keeps its result. 0 when there are fewer turns.
 */
export function recentStart(entries: readonly TranscriptEntry[], maxTurns: number): number {
  let start = 0;
  let turns = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    if (entries[i].type !== 'human') continue;
    if (++turns > maxTurns) break;
    start = i;
  }
  return start;
}

/** The conversation for the provider: the last `maxTurns` turns. */
export function historyOf(entries: readonly TranscriptEntry[], maxTurns: number): ChatMessage[] {
  const history: ChatMessage[] = [];
  for (const entry of entries.slice(recentStart(entries, maxTurns))) {
    if (entry.type === 'human') history.push(userMessage(entry.content, entry.attachments, entry.homeServer));
    else history.push(...entry.chat);
  }
  return history;
}
