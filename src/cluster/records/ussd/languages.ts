// Thread: any, cluster mode (the actor hosts read and write it)
// The phones' language choices (ussd/services/languages.ts) in the replicated JetStream KV bucket `ussd_languages`.
import type { ClusterConnection } from '../../connection.js';
import { KvRecordStore } from '../../record-store.js';
import type { LanguageChoices } from '../../../ussd/services/languages.js';

export async function openJetStreamLanguageChoices(cluster: ClusterConnection): Promise<LanguageChoices> {
  const kv = await KvRecordStore.open<{ language: string }>(cluster, { name: 'ussd_languages' });
  return {
    get: async (serviceId, phoneNumber) => (await kv.get([serviceId, phoneNumber]))?.value.language,
    set: async (serviceId, phoneNumber, language) => void (await kv.put([serviceId, phoneNumber], { language })),
  };
}
