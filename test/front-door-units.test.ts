// Units of the front door's per-request shortcuts: request ids, the auth cache's LRU, the peer's address.
import t from 'tap';
import uWS from 'uWebSockets.js';
import { addressOfBytes, normalizeAddress, peerKey } from '../dist/src/http/client-address.js';
import { nextRequestId } from '../dist/src/http/request-id.js';
import { ExpiringLru } from '../dist/src/oracle/auth/cache.js';

t.test('request ids are UUID-shaped and distinct', async (t) => {
  const ids = Array.from({ length: 10_000 }, () => nextRequestId());
  for (const id of [ids[0], ids[9_999]]) t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  t.equal(new Set(ids).size, ids.length);
});

t.test('the LRU evicts the least recently used entry, a recent hit included', async (t) => {
  const lru = new ExpiringLru<number>(8); // a hit moves an entry when it was touched more than 2 insertions ago
  const far = Date.now() + 60_000;
  for (let i = 0; i < 8; i++) lru.set(`k${i}`, i, far);
  t.equal(lru.get('k0'), 0, 'k0 is touched: moved to the back (8 insertions since)');
  lru.set('k8', 8, far);
  t.equal(lru.get('k1'), undefined, 'k1 was the least recently used');
  t.equal(lru.get('k0'), 0, 'k0 survived');
  t.equal(lru.size, 8);
  for (let i = 9; i < 15; i++) lru.set(`k${i}`, i, far);
  t.equal(lru.get('k0'), 0, 'k0 survives six more insertions (the six entries older than it went)');
  for (let i = 2; i < 8; i++) t.equal(lru.get(`k${i}`), undefined, `k${i} evicted`);
});

t.test('the LRU forgets expired entries', async (t) => {
  const lru = new ExpiringLru<string>(4);
  lru.set('a', 'A', 1_000);
  t.equal(lru.get('a', 999), 'A');
  t.equal(lru.get('a', 1_000), undefined);
  t.equal(lru.size, 0);
});

t.test("a peer's address read as bytes is the address its text form gives", async (t) => {
  // Real sockets: uWS reports the same peer as text and as bytes; the front door reads the bytes.
  const app = uWS.App().get('/*', (res) => {
    const text = normalizeAddress(new TextDecoder().decode(res.getRemoteAddressAsText()));
    const bytes = new Uint8Array(res.getRemoteAddress());
    res.end(JSON.stringify({ text, bytes: addressOfBytes(bytes), key: peerKey(bytes) }));
  });
  const listening = (host: string) =>
    new Promise<uWS.us_listen_socket | false>((resolve) => app.listen(host, 0, resolve));
  const sockets = [await listening('127.0.0.1'), await listening('::')].filter((s): s is uWS.us_listen_socket =>
    Boolean(s),
  );
  t.teardown(() => {
    for (const s of sockets) uWS.us_listen_socket_close(s);
  });
  const [v4, dual] = sockets.map((s) => uWS.us_socket_local_port(s));
  const peers: [string, string][] = [[`http://127.0.0.1:${v4}/`, '127.0.0.1']];
  if (dual) peers.push([`http://127.0.0.1:${dual}/`, '127.0.0.1'], [`http://[::1]:${dual}/`, '::1']);
  for (const [url, expected] of peers) {
    const seen = (await (await fetch(url)).json()) as { text: string; bytes: string; key: number | string };
    t.equal(seen.bytes, seen.text, `${url}: the same address as the text form`);
    t.equal(seen.bytes, expected, url);
  }
  t.ok(dual, 'a dual-stack socket was tested (IPv4-mapped and IPv6 peers)');
  // Forms no loopback socket gives: written as uWS writes them, then normalised.
  const bytes = (...groups: number[]) => new Uint8Array(groups.flatMap((g) => [g >> 8, g & 255]));
  t.equal(addressOfBytes(bytes(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)), '2001:db8::1');
  t.equal(
    addressOfBytes(bytes(0xfe80, 0, 0, 0, 0x1, 0x2, 0x3, 0x4)),
    normalizeAddress('fe80:0000:0000:0000:0001:0002:0003:0004'),
  );
  t.equal(addressOfBytes(new Uint8Array([10, 0, 0, 7])), '10.0.0.7');
  t.equal(addressOfBytes(new Uint8Array(0)), '', 'no peer: the empty text, as uWS gives');
  t.equal(
    peerKey(new Uint8Array([10, 0, 0, 7])),
    peerKey(bytes(0, 0, 0, 0, 0, 0xffff, 0x0a00, 0x0007)),
    'IPv4 and IPv4-mapped IPv6: one key',
  );
  t.not(peerKey(bytes(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)), peerKey(bytes(0x2001, 0xdb8, 0, 0, 0, 0, 0, 2)));
});
