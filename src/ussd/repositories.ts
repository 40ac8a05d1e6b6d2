// Thread: any
// The USSD record families, the port the face declares: the sessions (the actors' store and the front door's live
// index), the customers, the published services, the phones' languages and resume points. The composition root
// picks the engine (src/app/records.ts): LMDB's (src/records/lmdb/ussd/) or JetStream's (src/cluster/records/ussd/),
// both held to the contract suites (test/contracts/). A new family: its port here, an implementation in each.
import type { CustomerRepository } from './customers/repository.js';
import type { LanguageChoices } from './services/languages.js';
import type { PublishedServices } from './services/published.js';
import type { ResumePoints } from './services/resume-points.js';
import type { UssdLiveIndex, UssdSessionStore } from './sessions/repository.js';
import type { OutboxStore, RecordInSession } from './outbox/store.js';

/** An actor host: its index and the hosts' count (its share of the session ids). */
export interface HostShare {
  index: number;
  count: number;
}

export interface UssdRecords {
  /** The sessions as the actors of `host` read and write them (cluster mode: held by this host, fenced). */
  sessions(host: HostShare): Promise<UssdSessionStore>;
  /** The front door's live set: the operator listing, the gauge, the sweep, inherited notifications. */
  liveSessions(): Promise<UssdLiveIndex>;
  /**
   * The live set an actor host seeds its share of the gauge from (ussd/actor/live-sessions.ts); absent where the
   * front door counts every host's (a cluster: UssdLiveIndex.liveCount).
   */
  hostLiveSessions?(): Promise<UssdLiveIndex>;
  /** Where the outbox keeps notifications; `inRecord` records one in its session's record, where that is the store. */
  outbox(inRecord: RecordInSession): OutboxStore;
  /** Whether notifications committed before this start wait (the actor hosts then deliver them without a dial). */
  pendingAtStart(): boolean;
  customers(): Promise<CustomerRepository>;
  published(): Promise<PublishedServices>;
  languages(): Promise<LanguageChoices>;
  resumePoints(): Promise<ResumePoints>;
}
