// The chat session repository contract against LMDB.
import t from 'tap';
import { openLmdbSessionRepository } from '../dist/src/records/lmdb/oracle/sessions.js';
import { sessionRepositoryContract } from './contracts/chat-sessions.js';
import { tempStore } from './helpers/store.js';

sessionRepositoryContract(t, async (t) => openLmdbSessionRepository(tempStore(t, 'repo-sessions-')));
