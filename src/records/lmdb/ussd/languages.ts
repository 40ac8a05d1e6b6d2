// Thread: any (the actor hosts read and write it)
// The phones' language choices in LMDB database `ussd-languages`, keyed `<service>/<phone>` (ussd/services/languages.ts).
import type { Store } from '../../../store/env.js';
import type { LanguageChoices } from '../../../ussd/services/languages.js';

export function openLmdbLanguageChoices(store: Store): LanguageChoices {
  const db = store.db<string>('ussd-languages');
  return {
    get: (serviceId, phoneNumber) => db.get(`${serviceId}/${phoneNumber}`),
    set: async (serviceId, phoneNumber, language) => void (await db.put(`${serviceId}/${phoneNumber}`, language)),
  };
}
