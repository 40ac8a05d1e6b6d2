// "Committed and synced before the answer", watched at the system calls: the real server runs as its own process
// with strace attached to all its threads; for a dial and for a continuation, the LMDB page holding the session's
// key is written and data.mdb is fdatasync'ed after the request was read, and then the meta page that makes that
// commit the database's state reaches the disk (written through an O_DSYNC descriptor, or synced after), all before
// the answer's first byte is sent. A server that answered first, committed without a sync, or left the meta page
// to a later commit's sync (LMDB's noMetaSync: a power loss then could undo an answered step), fails here.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { Test } from 'tap';
import { startChildServer } from './helpers/child-server.js';
import { attachStrace } from './helpers/strace.js';

/** One system call as strace printed it: its start (with its arguments) and the line where it returned. */
interface Call {
  name: string;
  start: number;
  end: number;
  text: string;
}

/** The calls of an `strace -f -o` file, in the order they started; interleaved calls are split by strace into "unfinished" and "resumed" lines. */
function callsIn(trace: string): Call[] {
  const calls: Call[] = [];
  const open = new Map<string, Call>();
  trace.split('\n').forEach((line, index) => {
    const resumed = /^(\d+)\s+[\d.]+ <\.\.\. (\w+) resumed>/.exec(line);
    if (resumed) {
      const call = open.get(resumed[1]);
      if (call) call.end = index;
      open.delete(resumed[1]);
      return;
    }
    const started = /^(\d+)\s+[\d.]+ (\w+)\((.*)$/.exec(line);
    if (!started) return;
    const call = { name: started[2], start: index, end: index, text: started[3] };
    calls.push(call);
    if (line.endsWith('<unfinished ...>')) open.set(started[1], call);
  });
  return calls;
}

async function traced(t: Test, pid: number, file: string) {
  const stop = await attachStrace(t, pid, file, [
    '-ttt',
    '-y',
    '-s',
    '8192',
    '-e',
    'trace=recvfrom,sendto,pwrite64,pwritev,writev,fdatasync,fsync',
  ]);
  return async () => callsIn(await stop());
}

t.test('a step is written and synced to disk after its request is read and before its answer is sent', async (t) => {
  const server = await startChildServer(t, { ACTOR_THREADS: '1' });
  const dir = mkdtempSync(join(tmpdir(), 'sar-strace-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const stop = await traced(t, server.child.pid!, join(dir, 'trace'));

  const sessionId = `durable-${process.pid}-${Date.now()}`;
  const steps = ['', '1'];
  for (const text of steps) {
    const response = await fetch(`${server.url}/api/ussd`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId, serviceCode: '*384#', phoneNumber: '+254700000001', text }),
    });
    t.match(await response.text(), /^CON /);
  }
  const calls = await stop();

  for (const text of steps) {
    const request = calls.find(
      (call) =>
        call.name === 'recvfrom' && call.text.includes(sessionId) && call.text.includes(`\\"text\\":\\"${text}\\"`),
    );
    const answer =
      request &&
      calls.find((call) => call.name === 'sendto' && call.start > request.end && /HTTP\/1\.1 200/.test(call.text));
    if (!t.ok(request && answer, `step "${text}": its request was read and its answer sent`)) continue;
    const between = calls.filter((call) => call.start > request!.end && call.end < answer!.start);
    const written = between.find(
      (call) =>
        /^(pwrite64|pwritev|writev)$/.test(call.name) && /data\.mdb>/.test(call.text) && call.text.includes(sessionId),
    );
    t.ok(written, `step "${text}": the page with the session's key was written to data.mdb before the answer`);
    const synced = written && between.find((call) => isSyncOfDataFile(call) && call.start > written.end);
    t.ok(synced, `step "${text}": then data.mdb was synced, before the answer`);
    const meta = synced && between.map(metaPageWrite).find((write) => write && write.call.start > synced.end);
    t.ok(meta, `step "${text}": then a meta page of data.mdb was written, before the answer`);
    if (!meta) continue;
    const durable =
      isSynchronousWrite(server.child.pid!, meta.fd) ||
      between.some((call) => isSyncOfDataFile(call) && call.start > meta.call.end);
    t.ok(
      durable,
      `step "${text}": that meta page reached the disk before the answer (O_DSYNC descriptor, or synced after)`,
    );
  }
});

const isSyncOfDataFile = (call: Call) => /^f(data)?sync$/.test(call.name) && /data\.mdb>/.test(call.text);

/**
 * A write to one of LMDB's two meta pages, the first two pages of data.mdb: `pwrite64(FD</path/data.mdb>, "...", LENGTH,
 * OFFSET) = N`, or `... OFFSET <unfinished ...>` when another thread's call came in between. The page size is the
 * OS's, 4096 on the machines this runs on.
 */
function metaPageWrite(call: Call): { call: Call; fd: number } | undefined {
  if (call.name !== 'pwrite64') return undefined;
  const match = /^(\d+)<[^>]*data\.mdb>.*, \d+, (\d+)(?:\) = | <unfinished)/.exec(call.text);
  return match && Number(match[2]) < 2 * 4096 ? { call, fd: Number(match[1]) } : undefined;
}

/** Whether the server's descriptor `fd` was opened with O_DSYNC (or O_SYNC, which includes it): each write is on disk when it returns. */
function isSynchronousWrite(pid: number, fd: number): boolean {
  const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'));
  const O_DSYNC = 0o10000;
  return flags !== null && (parseInt(flags[1], 8) & O_DSYNC) !== 0;
}
