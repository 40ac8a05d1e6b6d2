// "Acknowledged means fsynced on a quorum", watched at the system calls: three real nats-servers (sync_interval:
// always, as startNatsCluster configures them) and a real node each traced by strace. For each step of a USSD
// session, after the node read the request and before it sent the answer, at least two of the three servers wrote
// the step's record (the sessions journal's append carrying the session) to a file of that stream (the stream's
// message blocks, or its replication group's log, which a follower stores before it acknowledges) and then fsynced
// that file.
// A server left to its default (a flush every 2 minutes) writes but does not sync: the test fails then.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startTestNodes } from './helpers/cluster-nodes.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { attachStrace } from './helpers/strace.js';

/** One system call: when it started and when it returned (seconds since the epoch, as strace -ttt -T says). */
interface Call {
  name: string;
  start: number;
  end: number;
  text: string;
}

/** The calls of one `strace -f -ttt -T -o` file; an interleaved call is split into "unfinished" and "resumed" lines. */
function callsIn(trace: string): Call[] {
  const calls: Call[] = [];
  const open = new Map<string, Call>();
  for (const line of trace.split('\n')) {
    const resumed = /^(\d+)\s+([\d.]+) <\.\.\. \w+ resumed>/.exec(line);
    if (resumed) {
      const call = open.get(resumed[1]);
      if (call) call.end = Number(resumed[2]);
      open.delete(resumed[1]);
      continue;
    }
    const started = /^(\d+)\s+([\d.]+) (\w+)\((.*)$/.exec(line);
    if (!started) continue;
    const start = Number(started[2]);
    const took = /<([\d.]+)>$/.exec(line);
    const call = { name: started[3], start, end: start + (took ? Number(took[1]) : 0), text: started[4] };
    calls.push(call);
    if (line.endsWith('<unfinished ...>')) open.set(started[1], call);
  }
  return calls;
}

async function traced(t: Test, pid: number, file: string): Promise<() => Promise<Call[]>> {
  const stop = await attachStrace(t, pid, file, [
    '-ttt',
    '-T',
    '-y',
    '-s',
    '4096',
    '-e',
    'trace=recvfrom,sendto,sendmsg,write,writev,pwrite64,pwritev,fsync,fdatasync',
  ]);
  return async () => callsIn(await stop());
}

/** The file a call's first argument names (strace -y: `FD</path>`). */
const pathOf = (call: Call) => /^\d+<([^>]*)>/.exec(call.text)?.[1];

t.test(
  'every acknowledged USSD step is written and fsynced on at least two NATS servers before the node answers',
  async (t) => {
    const nats = await startTestNatsCluster(t);
    const { nodes } = await startTestNodes(t, nats, { count: 1 });
    const node = nodes[0];
    const dir = mkdtempSync(join(tmpdir(), 'sar-strace-nats-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const stops = [
      ...(await Promise.all(nats.servers.map((server) => traced(t, server.pid!, join(dir, server.name))))),
      await traced(t, node.pid, join(dir, 'node')),
    ];

    const sessionId = `durable-ack-${process.pid}-${Date.now()}`;
    const steps = ['', '1'];
    for (const text of steps) {
      const response = await fetch(`${node.url}/api/ussd`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sessionId, serviceCode: '*384#', phoneNumber: '+254700000002', text }),
      });
      t.match(await response.text(), /^CON /);
    }
    const traces = await Promise.all(stops.map((stop) => stop()));
    const nodeCalls = traces.pop()!;

    // Between step i's request and its answer, the only write that names the session is step i's append.
    steps.forEach((text) => {
      const request = nodeCalls.find(
        (call) =>
          call.name === 'recvfrom' && call.text.includes(sessionId) && call.text.includes(`\\"text\\":\\"${text}\\"`),
      );
      const answer =
        request &&
        nodeCalls.find(
          (call) => /^send(to|msg)$/.test(call.name) && call.start > request.end && /HTTP\/1\.1 200/.test(call.text),
        );
      if (!t.ok(request && answer, `step "${text}": its request was read and its answer sent`)) return;
      const synced = nats.servers.filter((server, i) => {
        const between = traces[i].filter((call) => call.start > request!.start && call.end < answer!.start);
        const written = between.find(
          (call) =>
            /^(write|writev|pwrite64|pwritev)$/.test(call.name) &&
            /\.blk$/.test(pathOf(call) ?? '') &&
            call.text.includes(`\\"${sessionId}\\"`),
        );
        const file = written && pathOf(written);
        const sync =
          file &&
          between.find(
            (call) => /^f(data)?sync$/.test(call.name) && pathOf(call) === file && call.start >= written.end,
          );
        t.comment(
          `step "${text}" on ${server.name}: ${written ? `written to ${file}` : 'not written'}${sync ? ', fsynced' : written ? ', not fsynced' : ''} before the answer`,
        );
        return sync !== undefined;
      });
      t.ok(
        synced.length >= 2,
        `step "${text}": written and fsynced on ${synced.map((server) => server.name).join(', ') || 'no server'} before the answer (a quorum is 2 of 3)`,
      );
    });
  },
);
