// Thread: any
// The service definitions a gateway serves, as published: every version by `id@version` (a session
// pinned to one reads it after a reload or a restart) and the current set new dials get. One node: LMDB database
// `ussd-services`, and a BroadcastChannel tells the actor hosts of this process that the set changed
// (src/records/lmdb/ussd/published.ts). Cluster mode:
// the replicated JetStream KV bucket `ussd_services`, watched by every node's hosts, so all serve one version
// (src/cluster/records/ussd/published.ts).
// A version is immutable: publishing other content under a published `id@version` is refused.
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
