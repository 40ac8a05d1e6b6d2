// Thread: any, cluster mode (the actor hosts write; the bucket's max age expires them)
// The saved points of continue-after-a-timeout (ussd/services/resume-points.ts) in the replicated JetStream KV
// bucket `ussd_resume`, whose max age (the longest `withinSeconds`) removes them.
import type { ClusterConnection } from '../../connection.js';
import { KvRecordStore } from '../../record-store.js';
import { MAX_RESUME_SECONDS } from '../../../ussd/services/definition.js';
import type { ResumePoint } from '../../../ussd/services/resume.js';
import type { ResumePoints } from '../../../ussd/services/resume-points.js';

export async function openJetStreamResumePoints(cluster: ClusterConnection): Promise<ResumePoints> {
  const kv = await KvRecordStore.open<ResumePoint>(cluster, { name: 'ussd_resume', ttlMs: MAX_RESUME_SECONDS * 1000 });
  return {
    get: async (serviceId, phoneNumber) => (await kv.get([serviceId, phoneNumber]))?.value,
    write: async (serviceId, phoneNumber, point) =>
      void (point ? await kv.put([serviceId, phoneNumber], point) : await kv.delete([serviceId, phoneNumber])),
    removeExpired: async () => 0,
  };
}
