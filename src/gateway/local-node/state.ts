// Thread: main
// The embedded node's state: records as protobuf bytes in the LMDB database `gateway-local-node`,
// seeded from the fixture at start-up.
import type { Database } from 'lmdb';
import protojson from 'protobufjs/ext/protojson.js';
import type { protobuf } from '../proto-root.js';
import { fitsKey } from '../../store/keys.js';
import { restToWireJson } from './fixture-json.js';
import { paginate, PaginationError, type Page, type PageRequestLike } from './pagination.js';
import { RECORDS, type LocalNodeFixture, type RecordKind } from './records.js';

// biome-ignore lint/suspicious/noExplicitAny: protobufjs messages, read by field name per record kind
type Message = Record<string, any>;
const END = '\uffff';

export class ChainState {
  constructor(
    private readonly db: Database<Uint8Array, string>,
    private readonly root: protobuf.Root,
  ) {}

  /** Replaces the stored records with the fixture's; returns how many were written. */
  seed(fixture: LocalNodeFixture): number {
    const writes: [string, Uint8Array][] = [];
    for (const kind of Object.keys(fixture.records) as RecordKind[]) {
      const family = RECORDS[kind];
      if (!family) throw new Error(`fixture: unknown record family ${kind}`);
      const type = this.root.lookupType(family.type);
      const given = fixture.records[kind]!;
      const keyOf = 'keyOf' in family ? family.keyOf : undefined;
      const entries: [string, Message][] =
        'single' in family
          ? [['', given]]
          : keyOf
            ? (given as Message[]).map((record) => [keyOf(record), record])
            : Object.entries(given);
      for (const [key, json] of entries) {
        let message: protobuf.Message;
        try {
          message = protojson.fromJson(type, restToWireJson(type, json));
        } catch (error) {
          throw new Error(`fixture: ${kind} ${JSON.stringify(key)}: ${(error as Error).message}`);
        }
        writes.push([family.prefix + key, type.encode(message).finish()]);
      }
    }
    this.db.clearSync();
    // A synchronous write transaction: start-up waits for it, and it commits as one.
    this.db.transactionSync(() => {
      for (const [key, value] of writes) this.db.put(key, value);
    });
    return writes.length;
  }

  get(kind: RecordKind, key = ''): Message | undefined {
    const family = RECORDS[kind];
    // No stored key is longer than LMDB's limit, so an oversized one is simply not there.
    if (!fitsKey(family.prefix + key)) return undefined;
    const bytes = this.db.get(family.prefix + key);
    return bytes ? this.root.lookupType(family.type).decode(bytes) : undefined;
  }

  /** A page of a family, or of the records whose key starts with `within` (e.g. one collection's). */
  page(kind: RecordKind, request: PageRequestLike | null | undefined, within = ''): Page<Message> {
    const family = RECORDS[kind];
    const type = this.root.lookupType(family.type);
    const prefix = family.prefix + within;
    const page = paginate<Uint8Array>((start, reverse) => this.#scan(prefix, start, reverse), request);
    return { items: page.items.map((bytes) => type.decode(bytes)), pagination: page.pagination };
  }

  /** Every record of a family that passes the filter. */
  filter(kind: RecordKind, keep: (record: Message) => boolean): Message[] {
    const family = RECORDS[kind];
    const type = this.root.lookupType(family.type);
    const found: Message[] = [];
    for (const { value } of this.#scan(family.prefix, undefined, false)) {
      const record = type.decode(value);
      if (keep(record)) found.push(record);
    }
    return found;
  }

  *#scan(prefix: string, start: string | undefined, reverse: boolean): Generator<{ key: string; value: Uint8Array }> {
    if (!fitsKey(prefix + END)) return; // no stored key starts with an oversized prefix
    if (start !== undefined && !fitsKey(prefix + start + END)) throw new PaginationError('pagination key is too long');
    const range = reverse
      ? this.db.getRange({ start: start === undefined ? prefix + END : prefix + start, end: prefix, reverse: true })
      : this.db.getRange({ start: prefix + (start ?? ''), end: prefix + END });
    for (const { key, value } of range) yield { key: key.slice(prefix.length), value };
  }
}
