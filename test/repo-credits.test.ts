// The credit repository contract against LMDB.
import t from 'tap';
import { openLmdbCredits } from '../dist/src/records/lmdb/oracle/credits.js';
import { creditRepositoryContract } from './contracts/credits.js';
import { tempStore } from './helpers/store.js';

creditRepositoryContract(t, async (t) => openLmdbCredits(tempStore(t, 'repo-credits-')));
