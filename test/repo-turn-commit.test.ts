// The turn commit contract against LMDB.
import t from 'tap';
import { openLmdbSessionStores } from '../dist/src/records/lmdb/oracle/turn-commit.js';
import { turnCommitContract } from './contracts/turn-commit.js';
import { tempStore } from './helpers/store.js';

turnCommitContract(t, async (t) => openLmdbSessionStores(tempStore(t, 'repo-turn-commit-')));
