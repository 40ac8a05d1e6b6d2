// Thread: any
// The USSD record families, the port the face declares: the sessions (the actors' store and the front door's live
// index), the customers, the published services, the phones' languages and resume points. The composition root
// picks the engine (src/app/records.ts): these LMDB ones, or JetStream's (src/cluster/records/ussd/).
import type { Store } from '../store/env.js';
import { LmdbCustomerRepository } from './customers/lmdb-repository.js';
import type { CustomerRepository } from './customers/repository.js';
import { openLmdbLanguageChoices, type LanguageChoices } from './services/languages.js';
import { LmdbPublished, type PublishedServices } from './services/published.js';
import { openLmdbResumePoints, type ResumePoints } from './services/resume-points.js';
import { LmdbUssdSessionRepository } from './sessions/lmdb-repository.js';
import type { UssdLiveIndex, UssdSessionRepository } from './sessions/repository.js';

/** An actor host: its index and the hosts' count (its share of the session ids). */
export interface HostShare {
  index: number;
  count: number;
}

export interface UssdRecords {
  /** The sessions as the actors of `host` read and write them (cluster mode: held by this host, fenced). */
  sessions(host: HostShare): Promise<UssdSessionRepository>;
  /** The front door's live set: the operator listing, the gauge, the sweep, inherited notifications. */
  liveSessions(): Promise<UssdLiveIndex>;
  customers(): Promise<CustomerRepository>;
  published(): Promise<PublishedServices>;
  languages(): Promise<LanguageChoices>;
  resumePoints(): Promise<ResumePoints>;
}

/** The node's LMDB: one repository is both the actors' store and the live index. */
export function lmdbUssdRecords(store: Store): UssdRecords {
  return {
    sessions: async () => new LmdbUssdSessionRepository(store),
    liveSessions: async () => new LmdbUssdSessionRepository(store),
    customers: async () => new LmdbCustomerRepository(store),
    published: async () => new LmdbPublished(store),
    languages: async () => openLmdbLanguageChoices(store),
    resumePoints: async () => openLmdbResumePoints(store),
  };
}
