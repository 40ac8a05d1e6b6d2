// Customer accounts of the USSD face, in the LMDB database `ussd-customers`. The wrong-PIN counter lives on
// the account, not the session, so three wrong PINs lock the account across dials. Sessions of one customer
// may run on different actor hosts at once: every read-modify-write runs inside one LMDB write transaction,
// which LMDB serialises across threads and processes.
import { randomBytes } from 'node:crypto';
import type { Database } from 'lmdb';
import { crashPoint } from '../crash-point.js';
import type { PinCipher } from '../ussd/pin-cipher.js';
import type { Store } from './env.js';

export interface CustomerRecord {
  /** `C` + 8 upper-case hex characters. */
  customerId: string;
  fullName: string;
  email?: string;
  phoneNumber: string;
  /** The PIN encrypted with the PIN cipher, bound to the customer ID. Never leaves this module. */
  pin: string;
  failedPinAttempts: number;
  /** Epoch ms until which PIN checks are refused. */
  lockedUntil?: number;
  createdAt: number;
}

/** A customer as the rest of the code sees it: everything but the PIN. */
export type Customer = Omit<CustomerRecord, 'pin'>;

export type PinCheck =
  | { result: 'ok'; customer: Customer }
  | { result: 'wrong'; attemptsLeft: number }
  /** `lockedNow`: this wrong PIN was the last allowed one. */
  | { result: 'locked'; until: number; lockedNow: boolean }
  | { result: 'unknown' };

export interface NewCustomer {
  fullName: string;
  email?: string;
  phoneNumber: string;
  pin: string;
}

export interface CustomerPolicy {
  pinLockMinutes: number;
  /** Wrong PINs in a row that lock the account (default 3). */
  maxPinAttempts?: number;
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

export class CustomerStore {
  readonly #db: Database<CustomerRecord, string>;
  /** Creation key -> customer ID (`ussd-account-creations`), written in the account's own transaction. */
  readonly #creations: Database<string, string>;
  readonly #cipher: PinCipher;
  readonly #lockMs: number;
  readonly #maxAttempts: number;

  constructor(db: Database<CustomerRecord, string>, creations: Database<string, string>, cipher: PinCipher, policy: CustomerPolicy) {
    this.#db = db;
    this.#creations = creations;
    this.#cipher = cipher;
    this.#lockMs = policy.pinLockMinutes * 60_000;
    this.#maxAttempts = policy.maxPinAttempts ?? 3;
  }

  static open(store: Store, cipher: PinCipher, policy: CustomerPolicy): CustomerStore {
    return new CustomerStore(store.db<CustomerRecord>('ussd-customers'), store.db<string>('ussd-account-creations'), cipher, policy);
  }

  get(customerId: string): Customer | undefined {
    const id = parseCustomerId(customerId);
    const record = id === undefined ? undefined : this.#db.get(id);
    return record && publicView(record);
  }

  /**
   * Creates an account with a fresh unique customer ID; resolves once it is committed. `creationKey` names
   * the request that creates it (a USSD session and the step it was at): created again with the same key, the
   * account of the first call is answered, so a retry after a crash between this commit and the session's
   * never makes a second account for the same person.
   */
  async create(input: NewCustomer, now: number, creationKey?: string): Promise<Customer> {
    const record = await this.#db.transaction(() => {
      const earlier = creationKey === undefined ? undefined : this.#creations.get(creationKey);
      const existing = earlier === undefined ? undefined : this.#db.get(earlier);
      if (existing) return existing;
      const customerId = this.#unusedId();
      const created: CustomerRecord = {
        customerId,
        fullName: input.fullName,
        ...(input.email ? { email: input.email } : {}),
        phoneNumber: input.phoneNumber,
        pin: this.#cipher.encrypt(input.pin, customerId),
        failedPinAttempts: 0,
        createdAt: now,
      };
      this.#db.putSync(customerId, created);
      if (creationKey !== undefined) this.#creations.putSync(creationKey, customerId);
      return created;
    });
    crashPoint('ussd-account-committed'); // the account is durable, the session step that made it not yet
    return publicView(record);
  }

  /**
   * Checks a PIN and counts wrong ones. `maxPinAttempts` wrong PINs in a row lock the account for
   * `pinLockMinutes`; the lock ends by itself; a right PIN resets the counter. While locked the PIN is not
   * even compared, so a locked account cannot be probed.
   */
  async verifyPin(customerId: string, pin: string, now: number): Promise<PinCheck> {
    const id = parseCustomerId(customerId);
    if (id === undefined) return { result: 'unknown' };
    return this.#db.transaction((): PinCheck => {
      const record = this.#db.get(id);
      if (!record) return { result: 'unknown' };
      if (record.lockedUntil !== undefined && record.lockedUntil > now) {
        return { result: 'locked', until: record.lockedUntil, lockedNow: false };
      }
      const lockExpired = record.lockedUntil !== undefined;
      if (this.#cipher.matches(record.pin, pin, id)) {
        if (record.failedPinAttempts !== 0 || lockExpired) this.#db.putSync(id, unlocked(record, 0));
        return { result: 'ok', customer: publicView(unlocked(record, 0)) };
      }
      const attempts = (lockExpired ? 0 : record.failedPinAttempts) + 1;
      if (attempts >= this.#maxAttempts) {
        const until = now + this.#lockMs;
        this.#db.putSync(id, { ...record, failedPinAttempts: attempts, lockedUntil: until });
        return { result: 'locked', until, lockedNow: true };
      }
      this.#db.putSync(id, unlocked(record, attempts));
      return { result: 'wrong', attemptsLeft: this.#maxAttempts - attempts };
    });
  }

  /** Replaces the PIN (the caller has checked the old one). False for an unknown customer. */
  async changePin(customerId: string, newPin: string): Promise<boolean> {
    const id = parseCustomerId(customerId);
    if (id === undefined) return false;
    return this.#db.transaction(() => {
      const record = this.#db.get(id);
      if (!record) return false;
      this.#db.putSync(id, { ...unlocked(record, 0), pin: this.#cipher.encrypt(newPin, id) });
      return true;
    });
  }

  #unusedId(): string {
    // 2^32 IDs: a clash is rare, and the check runs inside the write transaction, so it is final.
    for (let attempt = 0; attempt < 16; attempt++) {
      const id = `C${randomBytes(4).toString('hex').toUpperCase()}`;
      if (this.#db.get(id) === undefined) return id;
    }
    throw new Error('no unused customer ID found');
  }
}

function unlocked(record: CustomerRecord, failedPinAttempts: number): CustomerRecord {
  const { lockedUntil: _lock, ...rest } = record;
  return { ...rest, failedPinAttempts };
}

function publicView(record: CustomerRecord): Customer {
  const { pin: _pin, ...customer } = record;
  return customer;
}
