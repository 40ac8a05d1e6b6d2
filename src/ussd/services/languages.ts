// Thread: actor host
// The language each phone number chose, kept with the other USSD records so the next dial (any day,
// any node) opens in it. One node: LMDB database `ussd-languages`; cluster mode: the replicated JetStream KV
// bucket `ussd_languages`. A choice is committed (synced) before the screen that follows it is answered.
import type { ClusterConnection } from '../../cluster/connection.js';
import { KvRecordStore } from '../../cluster/record-store.js';
import type { Store } from '../../store/env.js';

export interface LanguageChoices {
  /** The phone's choice (a language code), per service; undefined when it never chose. At once on one node. */
  get(serviceId: string, phoneNumber: string): string | undefined | Promise<string | undefined>;
  set(serviceId: string, phoneNumber: string, language: string): Promise<void>;
}

export async function openLanguageChoices(store: Store, cluster?: ClusterConnection): Promise<LanguageChoices> {
  if (!cluster) {
    const db = store.db<string>('ussd-languages');
    return {
      get: (serviceId, phoneNumber) => db.get(`${serviceId}/${phoneNumber}`),
      set: async (serviceId, phoneNumber, language) => void (await db.put(`${serviceId}/${phoneNumber}`, language)),
    };
  }
  const kv = await KvRecordStore.open<{ language: string }>(cluster, { name: 'ussd_languages' });
  return {
    get: async (serviceId, phoneNumber) => (await kv.get([serviceId, phoneNumber]))?.value.language,
    set: async (serviceId, phoneNumber, language) => void (await kv.put([serviceId, phoneNumber], { language })),
  };
}
