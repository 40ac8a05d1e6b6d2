// Thread: any (the actor hosts write, the front door sweeps)
// The saved points of continue-after-a-timeout in LMDB: database `ussd-resume-points` (key `<service>/<phone>`),
// written in the transaction of the step that moves it (the actor host's turn commit, synced before the answer),
// and `ussd-resume-expiry`, its index by expiry (`<bucket, 15 digits>:<service>/<phone>`, the bucket the expiry
// rounded up to a minute) that the front door's sweep reads up to now, never the whole database.
import type { Store } from '../../../store/env.js';
import { freeingSpace } from '../../../store/write-guard.js';
import type { ResumePoint } from '../../../ussd/services/resume.js';
import type { ResumePoints } from '../../../ussd/services/resume-points.js';

const BUCKET_MS = 60_000;
const SWEEP_BATCH = 1000;
const time = (ms: number) => String(Math.ceil(ms / BUCKET_MS) * BUCKET_MS).padStart(15, '0');
const keyOf = (serviceId: string, phoneNumber: string) => `${serviceId}/${phoneNumber}`;
const entryOf = (key: string, point: ResumePoint) => `${time(point.expiresAt)}:${key}`;

export function openLmdbResumePoints(store: Store): ResumePoints {
  const points = store.db<ResumePoint>('ussd-resume-points');
  const index = store.db<number>('ussd-resume-expiry');
  return {
    get: (serviceId, phoneNumber) => points.get(keyOf(serviceId, phoneNumber)),
    write: (serviceId, phoneNumber, point) =>
      store.turn.write(() => {
        const key = keyOf(serviceId, phoneNumber);
        const old = points.get(key);
        const oldEntry = old && entryOf(key, old);
        const entry = point && entryOf(key, point);
        if (oldEntry !== undefined && oldEntry !== entry) index.removeSync(oldEntry);
        if (!point) return void (old && points.removeSync(key));
        points.putSync(key, point);
        if (entry !== oldEntry) index.putSync(entry as string, 1);
      }),
    async removeExpired(now) {
      // An entry's bucket is at or after its point's expiry: the buckets up to now's hold only expired points.
      const end = `${String(Math.floor(now / BUCKET_MS) * BUCKET_MS).padStart(15, '0')};`;
      let count = 0;
      for (;;) {
        const keys = [...index.getKeys({ end, limit: SWEEP_BATCH })];
        if (keys.length === 0) return count;
        count += await freeingSpace(() =>
          points.transactionSync(() => {
            let removed = 0;
            for (const entry of keys) {
              const key = entry.slice(16);
              const point = points.get(key);
              // The point moved since (a step wrote a new entry): only this entry is old.
              if (point && entryOf(key, point) === entry && points.removeSync(key)) removed++;
              index.removeSync(entry);
            }
            return removed;
          }),
        );
        if (keys.length < SWEEP_BATCH) return count;
      }
    },
  };
}
