// The revocation repository contract against LMDB.
import t from 'tap';
import { openLmdbRevocations } from '../dist/src/records/lmdb/oracle/revocations.js';
import { revocationRepositoryContract } from './contracts/revocations.js';
import { tempStore } from './helpers/store.js';

revocationRepositoryContract(t, async (t) => openLmdbRevocations(tempStore(t, 'repo-revocations-')));
