// Thread: any, cluster mode
// The published USSD service definitions (ussd/services/published.ts) in the replicated JetStream KV bucket
// `ussd_services`, watched by every node's hosts, so all serve one version.
import { isDeepStrictEqual } from 'node:util';
import type { ClusterConnection } from '../../connection.js';
import { KvRecordStore } from '../../record-store.js';
import type { ServiceDefinition } from '../../../ussd/services/definition.js';
import { keyOf, VersionClash, type CurrentSet, type PublishedServices } from '../../../ussd/services/published.js';

/** The cluster's current set, under a prefix of its own: a KV watch takes a prefix (`current.>`), never one key. */
const CURRENT_PREFIX = ['current'];
const CURRENT = ['current', 'set'];

export class JetStreamPublished implements PublishedServices {
  private constructor(private readonly kv: KvRecordStore<ServiceDefinition | CurrentSet>) {}

  static async open(connection: ClusterConnection): Promise<JetStreamPublished> {
    return new JetStreamPublished(await KvRecordStore.open(connection, { name: 'ussd_services' }));
  }

  async publish(definitions: readonly ServiceDefinition[], now = Date.now()): Promise<void> {
    for (const definition of definitions) {
      const key = keyOf(definition);
      const stored = await this.kv.get(['version', key]);
      if (stored && !isDeepStrictEqual(stored.value, definition)) throw new VersionClash(key);
      if (!stored) await this.kv.put(['version', key], definition);
    }
    // Written last: a node that sees the new set finds every version of it.
    await this.kv.put(CURRENT, { keys: definitions.map(keyOf), publishedAt: now });
  }

  async current(): Promise<ServiceDefinition[] | undefined> {
    const set = (await this.kv.get(CURRENT))?.value as CurrentSet | undefined;
    if (!set) return undefined;
    const found = await Promise.all(set.keys.map((key) => this.version(key)));
    return found.filter((definition): definition is ServiceDefinition => definition !== undefined);
  }

  async version(key: string): Promise<ServiceDefinition | undefined> {
    return (await this.kv.get(['version', key]))?.value as ServiceDefinition | undefined;
  }

  watch(onChange: () => void): Promise<{ stop(): void }> {
    return this.kv.watch(CURRENT_PREFIX, () => onChange());
  }
}
