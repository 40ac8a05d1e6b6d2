// Thread: any
// Where credit accounts live, one per user. Any session of the user may charge it at
// the same time (on any thread, or node), so every write is create-only or revision-checked: a debit made on
// a balance that moved meanwhile is refused and redone on the new balance (ledger.ts), never spent twice.
import type { RevisionedRecords } from '../../revisions.js';

export interface CreditAccount {
  balance: number;
  outstandingClaims: string[];
  updatedAt: string;
}

/** Keyed by the user's DID. */
export type CreditRepository = RevisionedRecords<string, CreditAccount>;
