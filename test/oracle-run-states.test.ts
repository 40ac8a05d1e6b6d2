// The run states client SDK 1.4.0 reads, on one node (the server as its own process, so that it can be killed):
// a turn sent while the session's previous one still runs is `queued` (GET /sessions/:id/run names it, and its
// re-join says so) until that one ends, then runs; a node killed with SIGKILL mid-turn and started again on the same
// DATA_DIR answers the re-join of the cut run with `done { status: "interrupted" }`, and the history has nothing
// of the cut turn (a turn's human message and answer are committed together, as before runs were kept).
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatKey, generateKey } from '../dist/src/tools/mint-ucan.js';
import { startChildServer, type ChildServer } from './helpers/child-server.js';
import { sdkFrames, sdkSend, sdkUser, type SdkFrame } from './helpers/sdk-client.js';
import { heldAnswer, startLlmStandIn } from './oracle-agent-llm-stand-in.js';

t.setTimeout(90_000);
const llm = await startLlmStandIn();
t.teardown(() => llm.close());

// An MCP server whose answers wait for `openMcp()`: the session's turn waits there (listing its tools, which no
// abort stops), holding the session's mailbox, as a long step of a turn does.
let mcpGate!: () => void;
const mcpOpen = new Promise<void>((resolve) => (mcpGate = resolve));
const mcpHeld = new Set<ServerResponse>();
const mcp = createServer(async (req, res) => {
  for await (const _ of req);
  mcpHeld.add(res);
  await mcpOpen;
  res.writeHead(500).end();
});
await new Promise<void>((resolve) => mcp.listen(0, '127.0.0.1', resolve));
t.teardown(() => {
  mcp.closeAllConnections();
  mcp.close();
});

const key = await generateKey();
const dataDir = mkdtempSync(join(tmpdir(), 'sar-run-states-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const env = {
  DATA_DIR: dataDir,
  ORACLE_PRIVATE_KEY: formatKey(key),
  ORACLE_NAME: 'Test Oracle',
  LLM_BASE_URL: llm.baseUrl,
  LLM_MODEL: 'stand-in',
  SSE_HEARTBEAT_SECONDS: '1',
  ACTOR_THREADS: '1',
  MCP_SERVERS: JSON.stringify([{ name: 'slow', url: `http://127.0.0.1:${(mcp.address() as AddressInfo).port}/mcp` }]),
  MCP_TIMEOUT_MS: '60000',
};
let server: ChildServer = await startChildServer(t, env);
const ada = await sdkUser(key.did());
const createSession = async () =>
  (
    (await (await fetch(`${server.url}/sessions`, { method: 'POST', headers: ada.headers() })).json()) as {
      sessionId: string;
    }
  ).sessionId;
const runOf = async (sessionId: string) =>
  (await (await fetch(`${server.url}/sessions/${sessionId}/run`, { headers: ada.headers() })).json()) as {
    run?: { runId: string; status: string };
  };
const rejoin = (runId: string, after: number) =>
  fetch(`${server.url}/runs/${encodeURIComponent(runId)}?after=${after}`, { headers: ada.headers() });
async function readAll(res: Response): Promise<SdkFrame[]> {
  const frames: SdkFrame[] = [];
  for await (const frame of sdkFrames(res)) frames.push(frame);
  return frames;
}
async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test('a turn sent while the previous one runs is queued, then runs to its end', async (t) => {
  const sessionId = await createSession();
  // The first turn waits on the MCP server (the session's mailbox is busy with it).
  const first = sdkSend(server.url, ada, sessionId, { message: 'first' });
  await until('the first turn to reach the MCP server', async () => (mcpHeld.size > 0 ? true : undefined));
  const firstRun = await until('the first run', async () => (await runOf(sessionId)).run);
  t.equal(firstRun.status, 'running', 'the first turn runs');

  const secondAnswer = heldAnswer('The second answer, ');
  llm.script(secondAnswer.responder);
  const second = sdkSend(server.url, ada, sessionId, { message: 'second' });
  const queued = await until('the second run', async () => {
    const { run } = await runOf(sessionId);
    return run && run.runId !== firstRun.runId ? run : undefined;
  });
  t.equal(queued.status, 'queued', 'GET /sessions/:id/run names the second turn, queued');
  const rejoined = await rejoin(queued.runId, 0);
  t.equal(rejoined.status, 200);
  const frames = sdkFrames(rejoined);
  t.match((await frames.next()).value, { event: 'run', data: { runId: queued.runId, status: 'queued' } });

  mcpGate(); // the first turn goes on, stopped by the second message; then the second runs
  const firstFrames = await readAll(await first);
  t.match(firstFrames.at(-1), { event: 'done', data: { status: 'aborted' } }, 'the first was stopped by the second');
  const rest: SdkFrame[] = [];
  for await (const frame of frames) {
    rest.push(frame);
    if (frame.event === 'message') secondAnswer.release();
  }
  t.same(rest.at(-1)?.data, { status: 'finished' }, 'the queued run, re-joined, ends with its own done');
  const secondFrames = await readAll(await second);
  t.same(secondFrames.at(-1)?.data, { status: 'finished' });
});

t.test('one node killed mid-turn and started again: the cut run is interrupted, nothing of it stored', async (t) => {
  mcpGate(); // nothing waits on the MCP server here
  const sessionId = await createSession();
  llm.script(heldAnswer('Half an answer').responder);
  const controller = new AbortController();
  const res = await sdkSend(server.url, ada, sessionId, { message: 'cut me off' }, controller.signal);
  const runId = res.headers.get('x-run-id')!;
  const seen: SdkFrame[] = [];
  for await (const frame of sdkFrames(res)) {
    seen.push(frame);
    if (frame.event === 'message') break;
  }
  const lastId = Math.max(...seen.filter((f) => f.id !== undefined).map((f) => Number(f.id)));
  server.child.kill('SIGKILL');
  await server.exited;
  controller.abort();

  server = await startChildServer(t, env);
  const rejoined = await rejoin(runId, lastId);
  t.equal(rejoined.status, 200, 'the cut run is known after the restart');
  const frames = await readAll(rejoined);
  t.same(
    frames.map((f) => [f.event, f.id]),
    [
      ['run', undefined],
      ['done', String(lastId + 1)],
    ],
    'a run frame, then done numbered after what the client had',
  );
  t.match(frames[0].data, { runId, status: 'interrupted' });
  t.same(frames[1].data, { status: 'interrupted', interrupted: true }, 'done says interrupted, as SDK 1.4.0 reads it');
  t.equal((await fetch(`${server.url}/sessions/${sessionId}/run`, { headers: ada.headers() })).status, 404);
  const history = (await (await fetch(`${server.url}/messages/${sessionId}`, { headers: ada.headers() })).json()) as {
    messages: { type: string; content: string }[];
  };
  t.same(
    history.messages.map((m) => [m.type, m.content]),
    [],
    'nothing of the cut turn: its message is committed with its answer',
  );
});
