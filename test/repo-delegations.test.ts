// The delegation repository contract against LMDB.
import t from 'tap';
import { openLmdbDelegations } from '../dist/src/records/lmdb/oracle/delegations.js';
import { delegationRepositoryContract } from './contracts/delegations.js';
import { tempStore } from './helpers/store.js';

delegationRepositoryContract(t, async (t) => {
  const store = tempStore(t, 'repo-delegations-');
  return (oracleDid) => openLmdbDelegations(store, oracleDid);
});
