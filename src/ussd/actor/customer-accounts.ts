// Thread: actor host
// What the USSD menu does with customer accounts (create, PIN checks, PIN change), over the
// CustomerRepository. The wrong-PIN counter lives on the account, not the session, so three wrong PINs lock
// the account across dials. Sessions of one customer may run on different hosts (or nodes) at once: each
// read-modify-write is a revision-checked update, retried from a fresh read when another write came first.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { base58btc } from '@ucanto/core';
import { crashPoint } from '../../base/crash-point.js';
import { retryOnConflict, type Versioned } from '../../store/revision.js';
import {
  parseCustomerId,
  type Customer,
  type CustomerRecord,
  type CustomerRepository,
  type KeptAnswer,
} from '../customers/repository.js';
import { identityContext } from '../account-secrets.js';
import type { PinCipher } from './pin-cipher.js';

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

export class CustomerAccounts {
  readonly #repository: CustomerRepository;
  readonly #cipher: PinCipher;
  readonly #lockMs: number;
  readonly #maxAttempts: number;

  constructor(repository: CustomerRepository, cipher: PinCipher, policy: CustomerPolicy) {
    this.#repository = repository;
    this.#cipher = cipher;
    this.#lockMs = policy.pinLockMinutes * 60_000;
    this.#maxAttempts = policy.maxPinAttempts ?? 3;
  }

  async get(customerId: string): Promise<Customer | undefined> {
    const record = await this.#read(customerId);
    return record && publicView(record.value);
  }

  /**
   * Creates an account with a fresh unique customer ID; resolves once it is committed. `creationKey` names
   * the request that creates it (a USSD session and the step it was at): created again with the same key, the
   * account of the first call is answered, so a retry after a crash between this commit and the session's
   * never makes a second account for the same person.
   */
  async create(input: NewCustomer, now: number, creationKey?: string): Promise<Customer> {
    // 2^32 IDs: a clash is rare, and the repository refuses a used ID, so the check is final.
    for (let attempt = 0; attempt < 16; attempt++) {
      const customerId = `C${randomBytes(4).toString('hex').toUpperCase()}`;
      const record: CustomerRecord = {
        customerId,
        fullName: input.fullName,
        ...(input.email ? { email: input.email } : {}),
        phoneNumber: input.phoneNumber,
        pin: this.#cipher.encrypt(input.pin, customerId),
        failedPinAttempts: 0,
        createdAt: now,
        ...this.#newIdentity(customerId),
      };
      const created = await this.#repository.create(record, creationKey);
      if (created.outcome === 'id-taken') continue;
      crashPoint('ussd-account-committed'); // the account is durable, the session step that made it not yet
      return publicView(created.customer.value);
    }
    throw new Error('no unused customer ID found');
  }

  /**
   * Checks a PIN and counts wrong ones. `maxPinAttempts` wrong PINs in a row lock the account for
   * `pinLockMinutes`; the lock ends by itself; a right PIN resets the counter. While locked the PIN is not
   * even compared, so a locked account cannot be probed.
   */
  verifyPin(customerId: string, pin: string, now: number): Promise<PinCheck> {
    return this.#readModifyWrite(customerId, { result: 'unknown' }, (record): [PinCheck, CustomerRecord?] => {
      if (record.lockedUntil !== undefined && record.lockedUntil > now) {
        return [{ result: 'locked', until: record.lockedUntil, lockedNow: false }];
      }
      const lockExpired = record.lockedUntil !== undefined;
      if (this.#cipher.matches(record.pin, pin, record.customerId)) {
        const reset = unlocked(record, 0);
        return [
          { result: 'ok', customer: publicView(reset) },
          record.failedPinAttempts !== 0 || lockExpired ? reset : undefined,
        ];
      }
      const attempts = (lockExpired ? 0 : record.failedPinAttempts) + 1;
      if (attempts >= this.#maxAttempts) {
        const until = now + this.#lockMs;
        return [
          { result: 'locked', until, lockedNow: true },
          { ...record, failedPinAttempts: attempts, lockedUntil: until },
        ];
      }
      return [{ result: 'wrong', attemptsLeft: this.#maxAttempts - attempts }, unlocked(record, attempts)];
    });
  }

  /** Replaces the PIN (the caller has checked the old one). False for an unknown customer. */
  changePin(customerId: string, newPin: string): Promise<boolean> {
    return this.#readModifyWrite(customerId, false, (record): [boolean, CustomerRecord] => [
      true,
      { ...unlocked(record, 0), pin: this.#cipher.encrypt(newPin, record.customerId) },
    ]);
  }

  /**
   * The account's did:key; an account made before identities existed gets one now (written revision-checked, so
   * two sessions of one customer racing agree on one). Undefined for an unknown customer.
   */
  identity(customerId: string): Promise<string | undefined> {
    return this.#readModifyWrite(customerId, undefined, (record): [string, CustomerRecord?] => {
      if (record.did) return [record.did];
      const identity = this.#newIdentity(record.customerId);
      return [identity.did, { ...record, ...identity }];
    });
  }

  /**
   * Keeps a turn that outlasted its step for the account's next visit to the service's ask state (one per service:
   * the newest): `pending` (no answer yet) when the step answered `working`, then its answer, which replaces only
   * that pending turn (not one shown and taken off already, nor a newer one). Whether it was written.
   */
  keepAnswer(
    customerId: string,
    serviceId: string,
    turnId: string,
    answer: string | null | undefined,
  ): Promise<boolean> {
    return this.#readModifyWrite(customerId, false, (record): [boolean, CustomerRecord?] => {
      const kept = record.answers?.[serviceId];
      if (answer !== undefined && !(kept?.turnId === turnId && kept.pending)) return [false];
      const next: KeptAnswer = answer === undefined ? { turnId, answer: null, pending: true } : { turnId, answer };
      return [true, { ...record, answers: { ...record.answers, [serviceId]: next } }];
    });
  }

  /**
   * The turn kept for the service, removed from the account as it is read (a pending one stays, until its answer is
   * shown); undefined when none. With `turnId`, only that turn's (its session showed it), pending or not.
   */
  takeAnswer(customerId: string, serviceId: string, turnId?: string): Promise<KeptAnswer | undefined> {
    return this.#readModifyWrite(customerId, undefined, (record): [KeptAnswer | undefined, CustomerRecord?] => {
      const kept = record.answers?.[serviceId];
      if (!kept || (turnId !== undefined && kept.turnId !== turnId)) return [undefined];
      if (kept.pending && turnId === undefined) return [kept];
      const { [serviceId]: _taken, ...others } = record.answers ?? {};
      const { answers: _all, ...rest } = record;
      return [kept, Object.keys(others).length > 0 ? { ...rest, answers: others } : rest];
    });
  }

  /** A fresh Ed25519 key: its did:key, and the private key encrypted with the PIN cipher for this account. */
  #newIdentity(customerId: string): { did: string; identityKey: string } {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
    const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64url');
    return { did: didKeyOf(raw), identityKey: this.#cipher.encrypt(pkcs8, identityContext(customerId)) };
  }

  /**
   * Reads the account, lets `change` decide the answer and the record to write (none: read-only), and writes
   * it revision-checked; on a conflict the change runs again on a fresh read. `unknown` answers a missing one.
   */
  #readModifyWrite<A>(
    customerId: string,
    unknown: A,
    change: (record: CustomerRecord) => [A, CustomerRecord?],
  ): Promise<A> {
    return retryOnConflict(async () => {
      const current = await this.#read(customerId);
      if (!current) return unknown;
      const [answer, next] = change(current.value);
      if (next !== undefined) await this.#repository.update(next, current.revision);
      return answer;
    });
  }

  #read(customerId: string): Promise<Versioned<CustomerRecord> | undefined> {
    const id = parseCustomerId(customerId);
    return id === undefined ? Promise.resolve(undefined) : this.#repository.get(id);
  }
}

function unlocked(record: CustomerRecord, failedPinAttempts: number): CustomerRecord {
  const { lockedUntil: _lock, ...rest } = record;
  return { ...rest, failedPinAttempts };
}

/** The did:key of a raw Ed25519 public key: the multicodec prefix 0xed 0x01, base58btc. */
function didKeyOf(publicKey: Uint8Array): string {
  return `did:key:${base58btc.encode(Uint8Array.from([0xed, 0x01, ...publicKey]))}`;
}

function publicView(record: CustomerRecord): Customer {
  const { pin: _pin, identityKey: _key, ...customer } = record;
  return customer;
}

/** What an identity key is bound to: its account, never the PIN's own context (a PIN cannot open as a key). */
