// Thread: any
// The USSD record families on the node's LMDB, the UssdRecords the face declares (ussd/repositories.ts).
import type { Store } from '../../../store/env.js';
import type { UssdRecords } from '../../../ussd/repositories.js';
import { LmdbCustomerRepository } from './customers.js';
import { openLmdbLanguageChoices } from './languages.js';
import { hasPending, LmdbOutboxStore } from './outbox.js';
import { LmdbPublished } from './published.js';
import { openLmdbResumePoints } from './resume-points.js';
import { LmdbUssdSessionRepository } from './sessions.js';

/**
 * One repository is both the actors' store and the live index; the outbox waits beside the steps, in the step's
 * transaction (outbox.ts), and what a crash left is delivered at start.
 */
export function lmdbUssdRecords(store: Store): UssdRecords {
  return {
    sessions: async () => new LmdbUssdSessionRepository(store),
    liveSessions: async () => new LmdbUssdSessionRepository(store),
    hostLiveSessions: async () => new LmdbUssdSessionRepository(store),
    outbox: () => new LmdbOutboxStore(store),
    pendingAtStart: () => hasPending(store),
    customers: async () => new LmdbCustomerRepository(store),
    published: async () => new LmdbPublished(store),
    languages: async () => openLmdbLanguageChoices(store),
    resumePoints: async () => openLmdbResumePoints(store),
  };
}
