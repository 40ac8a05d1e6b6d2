// The session repository contract against LMDB.
import t from 'tap';
import { openLmdbSessionRepository } from '../dist/src/oracle/sessions/lmdb-repository.js';
import { sessionRepositoryContract } from './contracts/sessions.js';
import { tempStore } from './helpers/temp-store.js';

sessionRepositoryContract(t, async (t) => openLmdbSessionRepository(tempStore(t, 'repo-sessions')));
