// Thread: any
// The customer accounts of the USSD face as a record family, behind an interface LMDB implements
// (src/records/lmdb/ussd/customers.ts) and JetStream KV in cluster mode (src/cluster/records/ussd/). Writes
// are create-only (a customer ID is never reused, a creation key names one account) or revision-checked.
import type { Revision, Versioned } from '../../store/revision.js';

export interface CustomerRecord {
  /** `C` + 8 upper-case hex characters. */
  customerId: string;
  fullName: string;
  email?: string;
  phoneNumber: string;
  /** The PIN encrypted with the PIN cipher, bound to the customer ID. Never leaves the actor hosts. */
  pin: string;
  failedPinAttempts: number;
  /** Epoch ms until which PIN checks are refused. */
  lockedUntil?: number;
  createdAt: number;
  /** The account's did:key (docs/ussd-ask.md): the oracle keeps its chat sessions and preferences under it. */
  did?: string;
  /** Its Ed25519 private key (PKCS#8, base64url) encrypted like the PIN, bound to the customer ID. */
  identityKey?: string;
  /**
   * Per service: the chat turn that outlasted its step (docs/ussd-ask.md), kept for the account's next visit to
   * that service's ask state: `pending` until its answer is kept here (null when the agent failed).
   */
  answers?: Record<string, KeptAnswer>;
}

export interface KeptAnswer {
  turnId: string;
  answer: string | null;
  /** The turn's answer is not known yet: the oracle has it (its chat session's transcript). */
  pending?: true;
}

/** A customer as the rest of the code sees it: everything but the PIN and the identity's private key. */
export type Customer = Omit<CustomerRecord, 'pin' | 'identityKey'>;

export type CreateOutcome =
  /** `existing`: the creation key was bound already; nothing was written, this is the account it names. */
  | { outcome: 'created' | 'existing'; customer: Versioned<CustomerRecord> }
  /** Another account has this customer ID: nothing was written, try another ID. */
  | { outcome: 'id-taken' };

export interface CustomerRepository {
  get(customerId: string): Promise<Versioned<CustomerRecord> | undefined>;
  /**
   * Creates `record` under its customer ID, only if no account has that ID. With `creationKey` (the request
   * that creates it), the key is bound to the ID in the same write, and a later create with the same key
   * writes nothing and answers the account of the first: a retried request never makes a second account.
   */
  create(record: CustomerRecord, creationKey?: string): Promise<CreateOutcome>;
  /** Replaces the account if its revision is still `expected`; RevisionConflictError when it moved. */
  update(record: CustomerRecord, expected: Revision): Promise<Revision>;
  /**
   * Up to `limit` accounts after cursor `after` (undefined: from the first), `next` the cursor for the next page when
   * there may be more: a key rotation walks them all. LMDB walks in ID order (the cursor is the last ID), JetStream in
   * write order (the cursor a bucket sequence), where an account rewritten during the walk is met again later.
   */
  page(after: string | undefined, limit: number): Promise<CustomerPage>;
}

export interface CustomerPage {
  records: Versioned<CustomerRecord>[];
  /** Pass as `after` for the next page; absent on the last page (an opaque string: see `page`). */
  next?: string;
}

const CUSTOMER_ID = /^C[0-9A-F]{8}$/;

/**
 * Reads a customer ID as typed on a phone: case-insensitive, surrounding spaces ignored, the leading `C`
 * optional. Undefined when it is not an ID.
 */
export function parseCustomerId(input: string): string | undefined {
  const id = input.trim().toUpperCase();
  const withPrefix = id.length === 8 ? `C${id}` : id;
  return CUSTOMER_ID.test(withPrefix) ? withPrefix : undefined;
}
