// Thread: any (the actor hosts read and write it)
// The language each phone number chose, kept with the other USSD records so the next dial (any day,
// any node) opens in it. One node: LMDB database `ussd-languages` (src/records/lmdb/ussd/languages.ts); cluster mode:
// the replicated JetStream KV bucket `ussd_languages` (src/cluster/records/ussd/languages.ts). A choice is committed
// (synced) before the screen that follows it is answered.
export interface LanguageChoices {
  /** The phone's choice (a language code), per service; undefined when it never chose. At once on one node. */
  get(serviceId: string, phoneNumber: string): string | undefined | Promise<string | undefined>;
  set(serviceId: string, phoneNumber: string, language: string): Promise<void>;
}
