// Thread: actor host
// Per-user credit balances over a CreditRepository (repository.ts).
//
// Claims: when a message cannot be paid for, the refused charge is recorded as a claim with its own id
// (`claim-<uuid>`), the amount the user must settle to continue. The 402 answer carries that id in `claims`
// and every claim of the user still unsettled (this one included, oldest first, at most MAX_OUTSTANDING)
// in `outstandingClaims`. A top-up adds credits and settles all outstanding claims.
import { randomUUID } from 'node:crypto';
import { DomainError } from '../../../runtime/errors.js';
import { changeRecord } from '../../revisions.js';
import type { CreditAccount, CreditRepository } from './repository.js';

export type { CreditAccount } from './repository.js';

/** Bounds the record of a user who keeps sending while out of credits. */
export const MAX_OUTSTANDING = 20;

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
  account(userDid: string): Promise<CreditAccount>;
  /** Takes the price of one message, or throws PaymentRequiredError (`credits_exhausted`) after recording a claim. */
  charge(userDid: string): Promise<CreditAccount>;
  /** Adds credits and settles the outstanding claims. */
  topUp(userDid: string, amount: number): Promise<CreditAccount>;
}

type ChargeOutcome = { paid: true; account: CreditAccount } | { paid: false; claim: string; account: CreditAccount };

export function creditLedger(repository: CreditRepository, options: CreditsOptions): CreditLedger {
  const fresh = (): CreditAccount => ({
    balance: options.initial,
    outstandingClaims: [],
    updatedAt: new Date().toISOString(),
  });
  // A fresh claim id per attempt is harmless: only the attempt that is stored is answered.
  const decide = (current: CreditAccount = fresh()): { value: CreditAccount; result: ChargeOutcome } => {
    const now = new Date().toISOString();
    if (current.balance >= options.perMessage) {
      const account = { ...current, balance: current.balance - options.perMessage, updatedAt: now };
      return { value: account, result: { paid: true, account } };
    }
    const claim = `claim-${randomUUID()}`;
    const account = {
      ...current,
      outstandingClaims: [...current.outstandingClaims, claim].slice(-MAX_OUTSTANDING),
      updatedAt: now,
    };
    return { value: account, result: { paid: false, claim, account } };
  };

  return {
    async account(userDid) {
      return (await repository.get(userDid))?.value ?? fresh();
    },

    async charge(userDid) {
      // Decided on the balance as stored and written only if it is still that one (changeRecord), so two
      // concurrent charges cannot both spend the last credit; the error is thrown once the claim is stored.
      const outcome = await changeRecord(repository, userDid, decide);
      if (outcome.paid) return outcome.account;
      throw new PaymentRequiredError(
        [outcome.claim],
        outcome.account.outstandingClaims,
        `Insufficient credits: a message costs ${options.perMessage} and your balance is ${outcome.account.balance}. ` +
          'Settle the outstanding claims to continue.',
      );
    },

    topUp(userDid, amount) {
      return changeRecord(repository, userDid, (current = fresh()) => {
        const account = {
          balance: current.balance + amount,
          outstandingClaims: [],
          updatedAt: new Date().toISOString(),
        };
        return { value: account, result: account };
      });
    },
  };
}
