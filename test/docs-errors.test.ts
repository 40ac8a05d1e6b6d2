// docs/errors.md cannot drift from the error tables the server answers with: the page is regenerated from the
// built dist/ and must be exactly the committed one.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const root = new URL('..', import.meta.url);

t.test('docs/errors.md is what scripts/errors-page.mjs prints', async (t) => {
  const generated = execFileSync(process.execPath, [new URL('scripts/errors-page.mjs', root).pathname, '--stdout'], {
    encoding: 'utf8',
  });
  const committed = readFileSync(new URL('docs/errors.md', root), 'utf8');
  t.ok(generated.includes('## Oracle: chat failures'), 'the page has its sections');
  t.equal(committed, generated, 'docs/errors.md is out of date: run `npm run docs:errors`');
});

t.test('every chat failure code and gRPC status is on the page', async (t) => {
  const page = readFileSync(new URL('docs/errors.md', root), 'utf8');
  const { CHAT_FAILURE_CODES } = await import('../dist/src/oracle/chat-failures.js');
  const { GRPC_ANSWERS } = await import('../dist/src/gateway/errors.js');
  for (const code of CHAT_FAILURE_CODES) t.match(page, `| \`${code}\` |`, code);
  for (const code of Object.keys(GRPC_ANSWERS).filter((code) => code !== '0')) t.match(page, `| ${code} \``, code);
});

t.test('every transient code, the waiting room, the drain END and the Socket.IO 429 are on the page', async (t) => {
  const page = readFileSync(new URL('docs/errors.md', root), 'utf8');
  const { TRANSIENT_CODES } = await import('../dist/src/base/errors.js');
  for (const code of Object.keys(TRANSIENT_CODES)) t.match(page, `| \`${code}\` | 503 Service Unavailable`, code);
  t.match(page, '| `WAITING_ROOM` | 503 Service Unavailable | transient, Retry-After 5 s |', 'the waiting room');
  t.match(page, /\| The node draining, [^|]+\| 200 OK \| 1 s \| `SERVICE_UNAVAILABLE` \|/, 'the drain END');
  t.match(page, /Socket\.IO[\s\S]*429 Too Many Requests with Retry-After/, 'the Socket.IO 429');
});
