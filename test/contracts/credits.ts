// What every CreditRepository does: the revisioned-records contract per user, and no double spend: debits
// racing on one balance (from any number of ledgers over the same records: threads, nodes) never take more
// than it held, and every refused one is recorded as a claim.
import type { Test } from 'tap';
import { creditLedger, PaymentRequiredError } from '../../dist/src/oracle/plugins/credits/ledger.js';
import type { CreditAccount, CreditRepository } from '../../dist/src/oracle/plugins/credits/repository.js';
import { revisionedRecordsContract } from './revisioned-records.js';

export type CreditRepositoryFactory = (t: Test) => Promise<CreditRepository>;

const account = (balance: number, claims: string[] = []) => ({
  balance,
  outstandingClaims: claims,
  updatedAt: '2026-01-01T00:00:00.000Z',
});

export function creditRepositoryContract(t: Test, open: CreditRepositoryFactory): void {
  revisionedRecordsContract(t, open, ['did:key:zA', 'did:key:zB'], [account(10), account(9), account(0, ['claim-1'])]);

  t.test('concurrent debits from several ledgers never spend more than the balance', async (t) => {
    const repository = await open(t);
    const options = { initial: 12, perMessage: 1 };
    const ledgers = [
      creditLedger(repository, options),
      creditLedger(repository, options),
      creditLedger(repository, options),
    ];
    const outcomes = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => ledgers[i % 3].charge('did:key:zA')),
    );
    const paid = outcomes.filter((o): o is PromiseFulfilledResult<CreditAccount> => o.status === 'fulfilled');
    const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    t.equal(paid.length, 12, 'exactly the balance was spent');
    t.same(
      paid.map((o) => o.value.balance).sort((a, b) => a - b),
      [...Array(12).keys()],
      'each paid debit saw its own balance',
    );
    t.equal(refused.length, 18);
    t.ok(refused.every((o) => o.reason instanceof PaymentRequiredError));
    const stored = await ledgers[0].account('did:key:zA');
    t.equal(stored.balance, 0);
    t.same(new Set(stored.outstandingClaims).size, stored.outstandingClaims.length);
    // As sets: the claims are stored in the order the refusals won their writes, not the order the calls were made.
    t.same(
      [...stored.outstandingClaims].sort(),
      refused
        .map((o) => (o.reason as PaymentRequiredError).claims[0])
        .filter((claim) => stored.outstandingClaims.includes(claim))
        .sort(),
      'the claims stored are those answered',
    );
  });

  t.test('a top-up racing with debits: both counted', async (t) => {
    const repository = await open(t);
    const ledger = creditLedger(repository, { initial: 2, perMessage: 1 });
    await Promise.allSettled([ledger.charge('did:key:zB'), ledger.topUp('did:key:zB', 5), ledger.charge('did:key:zB')]);
    t.equal((await ledger.account('did:key:zB')).balance, 5, '2 + 5 - 2');
  });
}
