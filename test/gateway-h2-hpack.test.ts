// HPACK of the gateway's own HTTP/2 client (src/gateway/h2): the RFC 7541 Appendix C examples byte for byte
// (literals, Huffman, dynamic table, eviction), round trips of random header lists, and random header sets
// sent by node's own http2 server (nghttp2's encoder: Huffman, indexing) read by our client, while our
// encoded request metadata is read by node's decoder.
import t from 'tap';
import fc from 'fast-check';
import http2 from 'node:http2';
import { encodeFields, HpackDecoder, type HeaderField } from '../dist/src/gateway/h2/hpack.js';
import { huffmanDecode, huffmanEncode } from '../dist/src/gateway/h2/huffman.js';
import { H2Channel } from '../dist/src/gateway/h2/channel.js';

const hex = (text: string) => Buffer.from(text.replace(/\s+/g, ''), 'hex');
const fields = (text: string): HeaderField[] =>
  text
    .trim()
    .split('\n')
    .map((line) => {
      const at = line.indexOf(': ', 1);
      return [line.slice(0, at), line.slice(at + 2)];
    });

const REQUESTS = [
  fields(':method: GET\n:scheme: http\n:path: /\n:authority: www.example.com'),
  fields(':method: GET\n:scheme: http\n:path: /\n:authority: www.example.com\ncache-control: no-cache'),
  fields(':method: GET\n:scheme: https\n:path: /index.html\n:authority: www.example.com\ncustom-key: custom-value'),
];
const RESPONSES = [
  fields(
    ':status: 302\ncache-control: private\ndate: Mon, 21 Oct 2013 20:13:21 GMT\nlocation: https://www.example.com',
  ),
  fields(
    ':status: 307\ncache-control: private\ndate: Mon, 21 Oct 2013 20:13:21 GMT\nlocation: https://www.example.com',
  ),
  fields(
    ':status: 200\ncache-control: private\ndate: Mon, 21 Oct 2013 20:13:22 GMT\nlocation: https://www.example.com\ncontent-encoding: gzip\n' +
      'set-cookie: foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1',
  ),
];

t.test('RFC 7541 C.2: single representations', async (t) => {
  const decoder = new HpackDecoder();
  t.same(
    decoder.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572')),
    [['custom-key', 'custom-header']],
    'C.2.1 literal with indexing',
  );
  t.equal(decoder.tableSize, 55);
  t.same(
    new HpackDecoder().decode(hex('040c 2f73 616d 706c 652f 7061 7468')),
    [[':path', '/sample/path']],
    'C.2.2 literal without indexing',
  );
  const never = new HpackDecoder();
  t.same(
    never.decode(hex('1008 7061 7373 776f 7264 0673 6563 7265 74')),
    [['password', 'secret']],
    'C.2.3 never indexed',
  );
  t.equal(never.tableSize, 0);
  t.same(new HpackDecoder().decode(hex('82')), [[':method', 'GET']], 'C.2.4 indexed');
});

t.test('RFC 7541 C.3 and C.4: requests without and with Huffman, one connection each', async (t) => {
  const plain = [
    '8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
    '8286 84be 5808 6e6f 2d63 6163 6865',
    '8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65',
  ];
  const huffman = [
    '8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff',
    '8286 84be 5886 a8eb 1064 9cbf',
    '8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf',
  ];
  for (const [name, blocks] of [
    ['C.3', plain],
    ['C.4', huffman],
  ] as const) {
    const decoder = new HpackDecoder();
    for (const [i, block] of blocks.entries()) t.same(decoder.decode(hex(block)), REQUESTS[i], `${name}.${i + 1}`);
    t.equal(decoder.tableSize, 164, `${name} table size`);
    t.same(decoder.table, [
      ['custom-key', 'custom-value'],
      ['cache-control', 'no-cache'],
      [':authority', 'www.example.com'],
    ]);
  }
});

t.test('RFC 7541 C.5 and C.6: responses with a 256-octet table (eviction), without and with Huffman', async (t) => {
  const plain = [
    '4803 3330 3258 0770 7269 7661 7465 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3120 474d 546e 1768 7474 7073 3a2f 2f77 7777 2e65 7861 6d70 6c65 2e63 6f6d',
    '4803 3330 37c1 c0bf',
    '88c1 611d 4d6f 6e2c 2032 3120 4f63 7420 3230 3133 2032 303a 3133 3a32 3220 474d 54c0 5a04 677a 6970 7738 666f 6f3d 4153 444a 4b48 514b 425a 584f 5157 454f 5049 5541 5851 5745 4f49 553b 206d 6178 2d61 6765 3d33 3630 303b 2076 6572 7369 6f6e 3d31',
  ];
  const huffman = [
    '4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3',
    '4883 640e ffc1 c0bf',
    '88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab 77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f 9587 3160 65c0 03ed 4ee5 b106 3d50 07',
  ];
  for (const [name, blocks] of [
    ['C.5', plain],
    ['C.6', huffman],
  ] as const) {
    const decoder = new HpackDecoder(256);
    const sizes = [222, 222, 215];
    blocks.forEach((block, i) => {
      t.same(decoder.decode(hex(block)), RESPONSES[i], `${name}.${i + 1}`);
      t.equal(decoder.tableSize, sizes[i], `${name}.${i + 1} table size`);
    });
    t.same(
      decoder.table.map(([name]) => name),
      ['set-cookie', 'content-encoding', 'date'],
    );
  }
});

t.test('table size updates and malformed blocks', async (t) => {
  const decoder = new HpackDecoder(256);
  decoder.decode(hex('400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572'));
  t.same(decoder.decode(hex('20 82')), [[':method', 'GET']], 'a size update to 0 empties the table');
  t.equal(decoder.tableSize, 0);
  t.throws(() => decoder.decode(hex('be')), { name: 'HpackError' }, 'index past the table');
  t.throws(() => decoder.decode(hex('3fe201')), /exceeds 256/, 'size update above the announced maximum');
  t.throws(() => decoder.decode(hex('82 20')), /after a field/, 'size update after a field');
  t.throws(() => decoder.decode(hex('80')), /index 0/);
  t.throws(() => decoder.decode(hex('4005 6162')), /truncated/, 'string cut short');
  t.throws(() => decoder.decode(hex('ff ff ff ff ff ff')), { name: 'HpackError' }, 'integer overflow or cut');
  t.throws(() => decoder.decode(hex('0081 ff')), /padding|EOS/, 'Huffman padding of 8 bits');
  t.throws(() => decoder.decode(hex('0084 ffff ffff 00')), /EOS/, 'Huffman EOS inside a string');
});

t.test('Huffman round trip of any byte string; encode then decode of any header list', async (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      const text = Buffer.from(bytes).toString('latin1');
      const coded = huffmanEncode(text);
      return huffmanDecode(coded, 0, coded.length) === text;
    }),
    { numRuns: 500 },
  );
  const name = fc.stringMatching(/^:?[a-z0-9-]{1,20}$/);
  const value = fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes).toString('latin1'));
  fc.assert(
    fc.property(fc.array(fc.tuple(name, value), { maxLength: 20 }), (list) => {
      const decoded = new HpackDecoder().decode(encodeFields(list as HeaderField[]));
      t.same(decoded, list);
      return true;
    }),
    { numRuns: 200 },
  );
});

t.test(
  'random header sets from node:http2 (nghttp2 encoder) read by our client; our metadata read by node',
  async (t) => {
    let answer: { headers: Record<string, string>; trailers: Record<string, string> } = { headers: {}, trailers: {} };
    let seen: http2.IncomingHttpHeaders = {};
    const server = http2.createServer();
    server.on('stream', (stream, headers) => {
      seen = headers;
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', ...answer.headers },
        { waitForTrailers: true },
      );
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0', ...answer.trailers }));
      stream.end(Buffer.from([0, 0, 0, 0, 1, 42]));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.teardown(() => server.close());
    const channel = new H2Channel(
      { host: '127.0.0.1', port: (server.address() as { port: number }).port },
      { maxReceiveBytes: 1024, keepaliveMs: 60_000 },
    );
    t.teardown(() => channel.close());

    // x- names keep clear of the headers node treats specially; values are visible ASCII with inner spaces.
    const name = fc.stringMatching(/^x-[a-z0-9-]{1,24}$/);
    const value = fc.stringMatching(/^[!-~]([ -~]{0,80}[!-~])?$/);
    const headerSet = fc.uniqueArray(fc.tuple(name, value), { maxLength: 12, selector: ([name]) => name });
    await fc.assert(
      fc.asyncProperty(headerSet, headerSet, headerSet, async (headers, trailers, metadata) => {
        answer = { headers: Object.fromEntries(headers), trailers: Object.fromEntries(trailers) };
        const outcome = await channel.call('/t.S/M', new Uint8Array(0), Object.fromEntries(metadata), 2000);
        t.equal(outcome.code, 0, outcome.details);
        t.same(outcome.bytes, Buffer.from([42]));
        for (const [name, value] of headers) t.equal(outcome.headers?.[name], value);
        for (const [name, value] of trailers) t.equal(outcome.trailers?.[name], value);
        for (const [name, value] of metadata) t.equal(seen[name], value);
        t.equal(seen[':path'], '/t.S/M');
        t.equal(seen['content-type'], 'application/grpc');
        return true;
      }),
      // Many sets over one connection: node's encoder indexes them, so the dynamic table fills and evicts.
      { numRuns: 150 },
    );
  },
);
