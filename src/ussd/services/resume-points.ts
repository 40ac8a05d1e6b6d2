// Thread: any (the actor hosts write, the front door sweeps)
// The saved points of continue-after-a-timeout (resume.ts), one per phone number and service, kept
// with the other per-phone USSD records. One node: LMDB, written in the transaction of the step that moves it, with
// an index by expiry for the front door's sweep (src/records/lmdb/ussd/resume-points.ts). Cluster mode: the
// replicated JetStream KV bucket `ussd_resume`, whose max age (the longest `withinSeconds`) removes them
// (src/cluster/records/ussd/resume-points.ts).
import type { ResumePoint } from './resume.js';

export interface ResumePoints {
  /** The point saved for the phone in the service, expired or not; at once on one node. */
  get(serviceId: string, phoneNumber: string): ResumePoint | undefined | Promise<ResumePoint | undefined>;
  /** Saves the point (null: removes it), committed before the promise resolves. */
  write(serviceId: string, phoneNumber: string, point: ResumePoint | null): Promise<void>;
  /** Removes the points expired by `now`; answers how many (none to do in cluster mode: the bucket's max age). */
  removeExpired(now: number): Promise<number>;
}
