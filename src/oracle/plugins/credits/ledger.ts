// Per-user credit balances in the LMDB database `oracle-credits`.
//
// Claims: when a message cannot be paid for, the refused charge is recorded as a claim with its own id
// (`claim-<uuid>`), the amount the user must settle to continue. The 402 answer carries that id in `claims`
// and every claim of the user still unsettled (this one included, oldest first, at most MAX_OUTSTANDING)
// in `outstandingClaims`. A top-up adds credits and settles all outstanding claims.
import { randomUUID } from 'node:crypto';
import { DomainError } from '../../../runtime/errors.js';
import type { Store } from '../../../store/env.js';

/** Bounds the record of a user who keeps sending while out of credits. */
export const MAX_OUTSTANDING = 20;

export interface CreditAccount {
  balance: number;
  outstandingClaims: string[];
  updatedAt: string;
}

export interface CreditsOptions {
  initial: number;
  perMessage: number;
}

/** The chat actor's `credits_exhausted` refusal (the oracle face answers it 402, oracle/errors.ts). */
export class PaymentRequiredError extends DomainError<'credits_exhausted'> {
  constructor(
    readonly claims: string[],
    readonly outstandingClaims: string[],
    message: string,
  ) {
    super('credits_exhausted', message, { claims, outstandingClaims });
  }
}

export interface CreditLedger {
  /** The user's account (a new user starts with the initial balance). */
  account(userDid: string): CreditAccount;
  /** Takes the price of one message, or throws PaymentRequiredError (`credits_exhausted`) after recording a claim. */
  charge(userDid: string): Promise<CreditAccount>;
  /** Adds credits and settles the outstanding claims. */
  topUp(userDid: string, amount: number): Promise<CreditAccount>;
}

type ChargeOutcome = { paid: true; account: CreditAccount } | { paid: false; claim: string; account: CreditAccount };

export function openCreditLedger(store: Store, options: CreditsOptions): CreditLedger {
  const db = store.db<CreditAccount>('oracle-credits');
  const fresh = (): CreditAccount => ({ balance: options.initial, outstandingClaims: [], updatedAt: new Date().toISOString() });
  const read = (userDid: string): CreditAccount => db.get(userDid) ?? fresh();

  return {
    account: read,

    async charge(userDid) {
      // The decision is made inside the transaction (consistent with concurrent charges on other threads);
      // the error is thrown after it commits, so the recorded claim is durable.
      const outcome = await db.transaction((): ChargeOutcome => {
        const current = read(userDid);
        const now = new Date().toISOString();
        if (current.balance >= options.perMessage) {
          const account = { ...current, balance: current.balance - options.perMessage, updatedAt: now };
          db.put(userDid, account);
          return { paid: true, account };
        }
        const claim = `claim-${randomUUID()}`;
        const account = { ...current, outstandingClaims: [...current.outstandingClaims, claim].slice(-MAX_OUTSTANDING), updatedAt: now };
        db.put(userDid, account);
        return { paid: false, claim, account };
      });
      if (outcome.paid) return outcome.account;
      throw new PaymentRequiredError(
        [outcome.claim],
        outcome.account.outstandingClaims,
        `Insufficient credits: a message costs ${options.perMessage} and your balance is ${outcome.account.balance}. ` +
          'Settle the outstanding claims to continue.',
      );
    },

    topUp(userDid, amount) {
      return db.transaction(() => {
        const current = read(userDid);
        const account = { balance: current.balance + amount, outstandingClaims: [], updatedAt: new Date().toISOString() };
        db.put(userDid, account);
        return account;
      });
    },
  };
}
