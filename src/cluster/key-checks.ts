// Thread: main, cluster mode
// The key checks (src/store/key-checks.ts) in a replicated JetStream KV bucket,
// `key_checks`, beside the records every node shares.
import { isRevisionConflict } from '../store/revision.js';
import type { KeyChecks } from '../store/key-checks.js';
import type { ClusterConnection } from './connection.js';
import { KvRecordStore } from './record-store.js';

export class JetStreamKeyChecks implements KeyChecks {
  private constructor(private readonly records: KvRecordStore<unknown>) {}

  static async open(connection: ClusterConnection): Promise<JetStreamKeyChecks> {
    return new JetStreamKeyChecks(await KvRecordStore.open(connection, { name: 'key_checks' }));
  }

  async get<T>(name: string): Promise<T | undefined> {
    return (await this.records.get([name]))?.value as T | undefined;
  }

  async putIfAbsent<T>(name: string, value: T): Promise<T> {
    try {
      await this.records.create([name], value);
      return value;
    } catch (error) {
      if (!isRevisionConflict(error)) throw error;
      return (await this.get<T>(name)) as T;
    }
  }

  async put<T>(name: string, value: T): Promise<void> {
    await this.records.put([name], value);
  }

  async remove(name: string): Promise<void> {
    await this.records.delete([name]);
  }
}
