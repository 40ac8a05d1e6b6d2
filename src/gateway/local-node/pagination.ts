// Thread: main
// Pagination as the Cosmos SDK's query.Paginate does it: by key (from a previous next_key) or by offset,
// default limit 100 (and then the total is counted), count_total, reverse; next_key is the key of the
// first record after the page.

export const DEFAULT_LIMIT = 100;

export interface PageRequestLike {
  key?: Uint8Array | null;
  offset?: unknown;
  limit?: unknown;
  count_total?: boolean;
  reverse?: boolean;
}

export interface Page<T> {
  items: T[];
  pagination: { next_key: Uint8Array | null; total: string };
}

export class PaginationError extends Error {}

/** A range scan over the keys after a prefix, from `start` (inclusive) in either direction. */
export type RangeScan<T> = (start: string | undefined, reverse: boolean) => Iterable<{ key: string; value: T }>;

export function paginate<T>(scan: RangeScan<T>, request: PageRequestLike | null | undefined): Page<T> {
  const key = request?.key && request.key.length > 0 ? Buffer.from(request.key).toString('utf8') : undefined;
  const offset = toCount(request?.offset);
  let limit = toCount(request?.limit);
  let countTotal = request?.count_total ?? false;
  const reverse = request?.reverse ?? false;
  if (offset > 0 && key !== undefined)
    throw new PaginationError('invalid request, either offset or key is expected, got both');
  if (limit === 0) {
    limit = DEFAULT_LIMIT;
    countTotal = true;
  }
  const items: T[] = [];
  let nextKey: string | undefined;

  if (key !== undefined) {
    for (const entry of scan(key, reverse)) {
      if (items.length === limit) {
        nextKey = entry.key;
        break;
      }
      items.push(entry.value);
    }
    return { items, pagination: { next_key: encodeKey(nextKey), total: '0' } };
  }

  const end = offset + limit;
  let count = 0;
  for (const entry of scan(undefined, reverse)) {
    count++;
    if (count <= offset) continue;
    if (count <= end) items.push(entry.value);
    else if (count === end + 1) {
      nextKey = entry.key;
      if (!countTotal) break;
    }
  }
  return { items, pagination: { next_key: encodeKey(nextKey), total: countTotal ? String(count) : '0' } };
}

function encodeKey(key: string | undefined): Uint8Array | null {
  return key === undefined ? null : Buffer.from(key, 'utf8');
}

function toCount(value: unknown): number {
  if (value == null) return 0;
  const number = typeof value === 'number' ? value : Number(String(value));
  return Math.min(number, Number.MAX_SAFE_INTEGER);
}
