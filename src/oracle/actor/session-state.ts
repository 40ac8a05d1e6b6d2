// Thread: actor host
// One chat session's stored state as its actor holds it (the record with the revision it read,
// the transcript's length and its recent entries) and every write to it. Only the newest turns the model
// needs are kept in memory, never the whole transcript. A turn appends its entries (create-only numbers) and
// moves the record (revision-checked) in one commit (SessionStores.commitTurn), so a writer that lost the
// session to another cannot overwrite it. The record carries the transcript's bytes, moved in that same commit:
// a turn that would take them past the bound is refused before anything is written (bounds.ts).
import type { ChatMessage } from '../chat/agent-types.js';
import type { Versioned } from '../../store/revision.js';
import type { SessionRecord } from '../sessions/records.js';
import { entriesBytes, type ChatBounds } from '../sessions/bounds.js';
import { chatRefusal } from '../chat/chat-protocol.js';
import {
  historyOf,
  itemOf,
  recentStart,
  type HistoryPage,
  type MessageItem,
  type MessagesPage,
  type MessagesPart,
  type AiEntry,
  type TranscriptEntry,
} from '../sessions/transcript.js';
import type { TranscriptPage } from '../sessions/transcript-repository.js';
import type { SessionStores } from '../sessions/turn-commit.js';

/** Entries read per page when the actor loads its recent turns or a client lists the transcript. */
const PAGE = 100;

/** Characters of JSON one part of GET /messages carries (at least one item), and most entries read at a time for it. */
const PART_CHARS = 128 * 1024;
const PART_READ_MAX = 32;

/** The stores and the bounds on what they hold (ChatServices has both). */
export type BoundedStores = SessionStores & { readonly bounds: ChatBounds };

export class SessionState {
  /** Loaded on the first turn: the transcript's length and (oldest first) its last `recentTurns` turns. */
  #transcript: { length: number; recent: TranscriptEntry[] } | undefined;
  /**
   * While a turn's entries are written, the transcript's length before them. JetStream writes them one key at a
   * time, so a read beside the commit stops there: a reader never sees a question without its answer.
   */
  #writingFrom: number | undefined;

  private constructor(
    private readonly stores: BoundedStores,
    private readonly recentTurns: number,
    private stored: Versioned<SessionRecord>,
  ) {}

  /** The session's state, or null when it does not exist. */
  static async load(stores: BoundedStores, sessionId: string, recentTurns: number): Promise<SessionState | null> {
    const stored = await stores.sessions.get(sessionId);
    return stored ? new SessionState(stores, recentTurns, stored) : null;
  }

  /**
   * Stores a new session (create-only: a taken id is a RevisionConflictError; a user holding as many sessions as
   * the bound allows, a SessionLimitError).
   */
  static async create(stores: BoundedStores, record: SessionRecord, recentTurns: number): Promise<SessionState> {
    const created = await stores.sessions.create({ ...record, transcriptBytes: 0 }, stores.bounds.sessionsPerUser);
    const state = new SessionState(stores, recentTurns, created);
    state.#transcript = { length: 0, recent: [] };
    return state;
  }

  /**
   * Cluster mode, at the start of a message: the record as stored now (one read). The recent transcript stays
   * only when the revision is the one this state holds (no other node wrote since); otherwise it is read again
   * when needed. Null when the session is gone.
   */
  async refreshed(): Promise<SessionState | null> {
    const stored = await this.stores.sessions.get(this.record.sessionId);
    if (!stored) return null;
    if (stored.revision !== this.stored.revision) {
      this.stored = stored;
      this.#transcript = undefined;
    }
    return this;
  }

  get record(): SessionRecord {
    return this.stored.value;
  }

  /** The conversation for the provider: the last `recentTurns` turns. */
  async history(): Promise<ChatMessage[]> {
    return historyOf((await this.#loaded()).recent, this.recentTurns);
  }

  /** Throws `storage_unavailable` when a turn could not be stored now (SessionStores.assertWritable). */
  assertWritable(): void {
    this.stores.assertWritable?.();
  }

  /** Refuses (`transcript_full`) entries of `bytes` that would take the transcript past its bound. */
  admit(bytes: number): void {
    const limit = this.stores.bounds.transcriptBytes;
    const used = this.record.transcriptBytes ?? 0;
    if (used + bytes <= limit) return;
    throw chatRefusal(
      'transcript_full',
      `This session's transcript is full: the message would take it past ${limit} bytes (${used} used); nothing of it was stored. Start a new session to go on.`,
      { limit, used },
    );
  }

  /**
   * A recovery's check: the turn whose human entry is `id`, when it is among the recent ones (it was committed),
   * with its answer (none when it had nothing in it); undefined when it was not committed.
   */
  async committedTurn(id: string): Promise<{ answer?: AiEntry } | undefined> {
    const recent = (await this.#loaded()).recent;
    const at = recent.findIndex((entry) => entry.id === id);
    if (at < 0) return undefined;
    const next = recent[at + 1];
    return next?.type === 'ai' ? { answer: next } : {};
  }

  /**
   * Stores a turn's entries and the record as the turn left it, together; refused (`transcript_full`, nothing
   * written) when they would take the transcript past its bound. The bytes are counted from the record at the
   * revision the commit names, so two writers cannot both add to the same count.
   */
  async commit(next: SessionRecord, added: readonly TranscriptEntry[]): Promise<void> {
    const bytes = entriesBytes(added);
    this.admit(bytes);
    const transcript = await this.#loaded();
    const counted = { ...next, transcriptBytes: (this.record.transcriptBytes ?? 0) + bytes };
    this.#writingFrom = transcript.length;
    try {
      this.stored = await this.stores.commitTurn(counted, this.stored.revision, transcript.length, added);
    } finally {
      this.#writingFrom = undefined;
    }
    transcript.length += added.length;
    transcript.recent.push(...added);
    transcript.recent.splice(0, recentStart(transcript.recent, this.recentTurns));
  }

  async delete(): Promise<void> {
    await this.stores.sessions.remove(this.record.sessionId, this.stored.revision);
    await this.stores.transcripts.remove(this.record.sessionId);
  }

  /** One page of the transcript as GET /messages lists it, oldest first. */
  async messages(from: number, limit = PAGE): Promise<MessagesPage> {
    const { entries, next } = await this.#read(from, limit);
    return next === undefined ? { messages: entries.map(itemOf) } : { messages: entries.map(itemOf), next };
  }

  /** Up to `limit` entries from `from` on, never past the entries of a commit being written (#writingFrom). */
  async #read(from: number, limit: number): Promise<TranscriptPage> {
    const end = this.#writingFrom;
    const count = end === undefined ? limit : Math.min(limit, end - from);
    if (count <= 0) return { entries: [] };
    const page = await this.stores.transcripts.read(this.record.sessionId, { from, limit: count });
    return end !== undefined && page.next !== undefined && page.next >= end ? { entries: page.entries } : page;
  }

  /**
   * One part of GET /messages' answer from entry `from` on: items as JSON until about PART_CHARS, so a read of
   * a long transcript holds one part at a time on both threads. Entry numbers run on without gaps (create-only
   * numbers, removed from the top down), so the part's next number is `from` plus its count.
   */
  async messagesPart(from: number): Promise<MessagesPart> {
    let json = '';
    let count = 0;
    for (let at = from; ; ) {
      // As many entries as the part still has room for, judged by those read so far (the first alone): an
      // entry read past the part's end is decoded for nothing, and entries may be hundreds of kilobytes each.
      const limit =
        count === 0 ? 1 : Math.min(PART_READ_MAX, Math.ceil((PART_CHARS - json.length) / (json.length / count)));
      const { entries, next } = await this.#read(at, limit);
      for (const [i, entry] of entries.entries()) {
        json += (count > 0 ? ',' : '') + JSON.stringify(itemOf(entry));
        count++;
        if (json.length < PART_CHARS) continue;
        const more = i < entries.length - 1 || next !== undefined;
        return more ? { json, count, next: from + count } : { json, count };
      }
      if (next === undefined) return { json, count };
      at = next;
    }
  }

  /**
   * One page for GET /sessions/:id/messages: entries [first, first + n) of a transcript of `length`, the
   * cursors clamped to it. The length is read from the store, not this state's copy: a read beside a running
   * turn sees what is committed (and not the entries of a commit still being written).
   */
  async historyPage(query: { limit: number; before?: number; after?: number }): Promise<HistoryPage> {
    const { transcripts } = this.stores;
    const sessionId = this.record.sessionId;
    const length = Math.min(await transcripts.length(sessionId), this.#writingFrom ?? Number.POSITIVE_INFINITY);
    let first: number;
    let entries: TranscriptEntry[];
    if (query.after !== undefined) {
      first = Math.min(query.after, length);
      entries = (await transcripts.read(sessionId, { from: first, limit: query.limit })).entries;
    } else {
      const before = Math.min(query.before ?? length, length);
      entries = (await transcripts.readNewest(sessionId, { before, limit: query.limit })).entries.reverse();
      first = before - entries.length;
    }
    const end = first + entries.length;
    return {
      messages: entries.map(itemOf),
      prevCursor: String(first),
      nextCursor: String(end),
      hasOlder: first > 0,
      hasNewer: end < length,
    };
  }

  /** The whole transcript as GET /messages lists it (`returnAllMessages`), read page by page. */
  async allMessages(): Promise<MessageItem[]> {
    const all: MessageItem[] = [];
    for (let from: number | undefined = 0; from !== undefined; ) {
      const page: MessagesPage = await this.messages(from);
      all.push(...page.messages);
      from = page.next;
    }
    return all;
  }

  /** Reads newest first until `recentTurns` user messages are in (or the transcript's start). */
  async #loaded(): Promise<{ length: number; recent: TranscriptEntry[] }> {
    if (this.#transcript) return this.#transcript;
    const { transcripts } = this.stores;
    const sessionId = this.record.sessionId;
    const length = await transcripts.length(sessionId);
    const newestFirst: TranscriptEntry[] = [];
    let turns = 0;
    for (let before: number | undefined = length; before !== undefined && turns < this.recentTurns; ) {
      const page = await transcripts.readNewest(sessionId, { before, limit: PAGE });
      newestFirst.push(...page.entries);
      turns += page.entries.filter((entry) => entry.type === 'human').length;
      before = page.next;
    }
    const recent = newestFirst.reverse();
    recent.splice(0, recentStart(recent, this.recentTurns));
    return (this.#transcript = { length, recent });
  }
}
