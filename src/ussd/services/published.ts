// Thread: any
// The service definitions a gateway serves, as published: every version by `id@version` (a session
// pinned to one reads it after a reload or a restart) and the current set new dials get. One node: LMDB database
// `ussd-services`, and a BroadcastChannel tells the actor hosts of this process that the set changed. Cluster mode:
// the replicated JetStream KV bucket `ussd_services`, watched by every node's hosts, so all serve one version
// (src/cluster/records/ussd/published.ts).
// A version is immutable: publishing other content under a published `id@version` is refused.
import { isDeepStrictEqual } from 'node:util';
import { BroadcastChannel } from 'node:worker_threads';
import type { Store } from '../../store/env.js';
import type { ServiceDefinition } from './definition.js';

export interface CurrentSet {
  /** `id@version` of each service new dials get. */
  keys: string[];
  publishedAt: number;
}

export interface PublishedServices {
  /** Makes `definitions` the current set; throws VersionClash when a version's content differs from its publication. */
  publish(definitions: readonly ServiceDefinition[], now?: number): Promise<void>;
  /** The current set's definitions; undefined before any publication. */
  current(): Promise<ServiceDefinition[] | undefined>;
  version(key: string): Promise<ServiceDefinition | undefined>;
  /** Calls `onChange` whenever a new set is published (by this process or, in cluster mode, any node). */
  watch(onChange: () => void): Promise<{ stop(): void }>;
}

export class VersionClash extends Error {
  constructor(readonly key: string) {
    super(`${key} is already published with other content: give the changed service a new version`);
    this.name = 'VersionClash';
  }
}

export const keyOf = (definition: ServiceDefinition) => `${definition.id}@${definition.version}`;

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
