// Thread: any
// The published service definitions in LMDB database `ussd-services` (`version/<id@version>` and `current`); a
// BroadcastChannel tells the actor hosts of this process that the set changed (ussd/services/published.ts).
import { isDeepStrictEqual } from 'node:util';
import { BroadcastChannel } from 'node:worker_threads';
import type { Store } from '../../../store/env.js';
import type { ServiceDefinition } from '../../../ussd/services/definition.js';
import { keyOf, VersionClash, type CurrentSet, type PublishedServices } from '../../../ussd/services/published.js';

const CHANNEL = 'ussd-services';
export class LmdbPublished implements PublishedServices {
  readonly #db;

  constructor(store: Store) {
    this.#db = store.db<ServiceDefinition | CurrentSet>('ussd-services');
  }

  async publish(definitions: readonly ServiceDefinition[], now = Date.now()): Promise<void> {
    await this.#db.transaction(() => {
      for (const definition of definitions) {
        const key = keyOf(definition);
        const stored = this.#db.get(`version/${key}`);
        if (stored !== undefined && !isDeepStrictEqual(stored, definition)) throw new VersionClash(key);
        if (stored === undefined) this.#db.putSync(`version/${key}`, definition);
      }
      this.#db.putSync('current', { keys: definitions.map(keyOf), publishedAt: now });
    });
    const channel = new BroadcastChannel(CHANNEL);
    channel.postMessage('published');
    channel.close();
  }

  async current(): Promise<ServiceDefinition[] | undefined> {
    const set = this.#db.get('current') as CurrentSet | undefined;
    if (!set) return undefined;
    return set.keys.map((key) => this.#db.get(`version/${key}`) as ServiceDefinition).filter(Boolean);
  }

  async version(key: string): Promise<ServiceDefinition | undefined> {
    return this.#db.get(`version/${key}`) as ServiceDefinition | undefined;
  }

  async watch(onChange: () => void): Promise<{ stop(): void }> {
    const channel = new BroadcastChannel(CHANNEL);
    channel.onmessage = () => onChange();
    (channel as unknown as { unref?: () => void }).unref?.();
    return { stop: () => channel.close() };
  }
}
