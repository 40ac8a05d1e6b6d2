// What every PreferencesRepository does: the revisioned-records contract per (user, oracle), and merges
// from several sessions at once all landing (PreferencesStore over the repository).
import type { Test } from 'tap';
import type { PreferencesRepository } from '../../dist/src/oracle/plugins/user-preferences/repository.js';
import { preferencesStore } from '../../dist/src/oracle/plugins/user-preferences/store.js';
import { revisionedRecordsContract } from './revisioned-records.js';

export type PreferencesRepositoryFactory = (t: Test) => Promise<PreferencesRepository>;

const ORACLE = 'did:key:zOracle';

export function preferencesRepositoryContract(t: Test, open: PreferencesRepositoryFactory): void {
  revisionedRecordsContract(
    t,
    open,
    [
      { userDid: 'did:key:zA', oracleDid: ORACLE },
      { userDid: 'did:key:zA', oracleDid: 'did:key:zOtherOracle' },
    ],
    [
      { userName: 'Ada', updatedAt: '2026-01-01T00:00:00.000Z' },
      { userName: 'Ada', tone: 'dry', updatedAt: '2026-01-02T00:00:00.000Z' },
      { updatedAt: '2026-01-03T00:00:00.000Z' },
    ],
  );

  t.test('merges of different fields from concurrent sessions all land', async (t) => {
    const repository = await open(t);
    // Two stores over the same records: two threads (or nodes) writing the same user's preferences.
    const [one, two] = [preferencesStore(repository), preferencesStore(repository)];
    await Promise.all([
      one.merge('did:key:zC', ORACLE, { userName: 'Cy' }),
      two.merge('did:key:zC', ORACLE, { agentName: 'Bot' }),
      one.merge('did:key:zC', ORACLE, { tone: 'dry' }),
      two.merge('did:key:zC', ORACLE, { language: 'French' }),
    ]);
    t.match(await one.get('did:key:zC', ORACLE), { userName: 'Cy', agentName: 'Bot', tone: 'dry', language: 'French' });
    t.equal(await two.get('did:key:zC', 'did:key:zOtherOracle'), null);
  });
}
