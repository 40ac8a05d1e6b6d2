// Thread: main
// GET /sessions answers from the JSON of the page it last served, while the user's list has not
// changed since. The listing (an LMDB range read, msgpack decoding, JSON.stringify) is most of the route's
// CPU; the check is one read of the list's version (SessionRepository.listVersion), written in the same
// commit as every change to the list, and the version is read before the page, so a cached page is never
// older than its version: a list is never stale after a write was acknowledged. The page is kept as UTF-8
// bytes, which uWS writes as they are (a string it would encode again on every answer).
import type { SessionRepository } from '../sessions/repository.js';
import { BoundedMap } from '../../base/bounded-map.js';

interface CachedPage {
  version: number;
  json: Buffer;
}

/** Pages kept (per user and offset/limit); the oldest entry goes first past it. */
const MAX_PAGES = 2_000;

export type SessionListJson = (userDid: string, page: { offset: number; limit: number }) => Promise<Buffer>;

export function cachedSessionLists(sessions: SessionRepository, maxPages = MAX_PAGES): SessionListJson {
  const pages = new BoundedMap<string, CachedPage>(maxPages);
  return async (userDid, page) => {
    const key = `${page.offset}|${page.limit}|${userDid}`;
    const version = await sessions.listVersion(userDid);
    const cached = pages.get(key);
    if (cached?.version === version) return cached.json;
    const json = Buffer.from(JSON.stringify(await sessions.listByUser(userDid, page)));
    pages.delete(key);
    pages.set(key, { version, json });
    return json;
  };
}
