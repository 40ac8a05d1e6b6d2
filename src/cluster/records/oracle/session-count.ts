// Thread: any holding a NATS connection, cluster mode
// How many chat sessions each user holds, for the cap on
// them, as one counter record per user in the `oracle_sessions` bucket:
//   c.<userDid> -> { count, at }
// KV has no transaction over two keys, so a create takes a place first (a revision-checked update of the counter:
// of creates racing from one count, on any nodes, one wins and the others read again), then writes the record; a
// removal gives its place back after the record is gone. So the cap holds exactly under racing creates, and a
// node dying between the two writes leaves the count one too high, never too low. Such a lost place is found when
// the user reaches the cap: if the counter has not moved for QUIET_MS (no create can still be between its two
// writes) and the user's index lists fewer sessions, the counter is set back to what is listed.
// A user with no counter yet (sessions made before it existed) starts from what the index lists.
import type { KvRecordStore } from '../../record-store.js';
import { isRevisionConflict, type Versioned } from '../../../store/revision.js';
import { SessionLimitError } from '../../../oracle/sessions/repository.js';

export interface SessionCounter {
  count: number;
  /** When it last moved (ms since the epoch, the writer's clock). */
  at: number;
}

/** How long a counter must stand still before it is checked against the index. */
const QUIET_MS = 60_000;

export class UserSessionCount {
  constructor(
    private readonly store: KvRecordStore<unknown>,
    /** How many sessions the user's index lists now. */
    private readonly listed: (userDid: string) => Promise<number>,
  ) {}

  /** Takes one of the user's `max` places (SessionLimitError when none is free). */
  async take(userDid: string, max: number): Promise<void> {
    for (;;) {
      const current = await this.#read(userDid);
      let count = current ? current.value.count : await this.listed(userDid);
      if (count >= max && current && Date.now() - current.value.at > QUIET_MS)
        count = Math.min(count, await this.listed(userDid));
      if (count >= max) throw new SessionLimitError(max);
      if (await this.#move(userDid, current, count + 1)) return;
    }
  }

  /** Gives a place back (after a removal, or a create that wrote no record). */
  async release(userDid: string): Promise<void> {
    for (;;) {
      const current = await this.#read(userDid);
      if (!current || current.value.count <= 0) return;
      if (await this.#move(userDid, current, current.value.count - 1)) return;
    }
  }

  #read(userDid: string): Promise<Versioned<SessionCounter> | undefined> {
    return this.store.get(['c', userDid]) as Promise<Versioned<SessionCounter> | undefined>;
  }

  /** Writes the counter if it is still as read; false when another writer moved it first. */
  async #move(userDid: string, current: Versioned<SessionCounter> | undefined, count: number): Promise<boolean> {
    const next: SessionCounter = { count, at: Date.now() };
    try {
      if (current) await this.store.update(['c', userDid], next, current.revision);
      else await this.store.create(['c', userDid], next);
      return true;
    } catch (error) {
      if (isRevisionConflict(error)) return false;
      throw error;
    }
  }
}
