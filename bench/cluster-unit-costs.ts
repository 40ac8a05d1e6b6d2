// `node dist/bench/cluster-unit-costs.js [--no-sync] [--count N]`: what one NATS operation of each kind that cluster
// mode uses costs on a local 3-server JetStream cluster: messages in + out of all servers (/varz) and CPU of the NATS
// servers and of the client process, per operation. The kinds: a KV read (to the stream leader), a revision-checked
// KV write (R3), a core request/reply between two connections on different servers (the routing hop), and a core
// publish between them (a stream frame): the disks' fsync cost docs/cluster.md's capacity model asks to measure.
// Then the journal's append as the bench makes it (3 writers, 8 steps' records per append) next to the alternative
// that was weighed (and not built): the same batch committed in LMDB (synced) by the writer and by two replica processes
// it sends it to over TCP (the node link's framing), done once the writer's and one replica's are on disk.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { FrameReader, writeFrame } from '../src/cluster/node-link/frames.js';
import { openStore } from '../src/store/env.js';
import { connectCluster, type ClusterConnection } from '../src/cluster/connection.js';
import { findNatsServer, startNatsCluster, type NatsCluster } from '../src/tools/local-nats-cluster.js';
import { KvRecordStore } from '../src/cluster/record-store.js';
import { cpuSecondsOf } from './lib/process.js';
import { natsMessages } from './lib/nats.js';

interface UnitCost {
  kind: string;
  messages: number;
  natsCpuMs: number;
  clientCpuMs: number;
}

/** Runs `count` operations, `concurrency` at a time, and measures them per operation. */
async function measure(
  nats: NatsCluster,
  kind: string,
  count: number,
  concurrency: number,
  op: (i: number) => Promise<unknown>,
): Promise<UnitCost> {
  const natsCpu = () => nats.servers.reduce((sum, server) => sum + cpuSecondsOf(server.pid!), 0);
  const cpuBefore = process.cpuUsage();
  const [messagesBefore, natsBefore] = [await natsMessages(nats), natsCpu()];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await op(next++);
    }),
  );
  const messages = (await natsMessages(nats)) - messagesBefore;
  const natsSeconds = natsCpu() - natsBefore;
  const client = process.cpuUsage(cpuBefore);
  return {
    kind,
    messages: messages / count,
    natsCpuMs: (natsSeconds * 1000) / count,
    clientCpuMs: (client.user + client.system) / 1000 / count,
  };
}

/**
 * The partition log of the structural option: each partition's writes appended to its own subject of one R3
 * stream, fenced by the expected last sequence of that subject; 16 partitions appended to at once. Per append of
 * one step's record, and per step when one append carries 16 steps' records (a group commit).
 */
async function partitionLog(
  nats: NatsCluster,
  connection: ClusterConnection,
  count: number,
  pad: string,
): Promise<UnitCost[]> {
  await connection.jsm.streams.add({ name: 'unit_log', subjects: ['unit.log.*'], num_replicas: 3 });
  const last = new Map<number, number>();
  const append = async (partition: number, body: string) => {
    const ack = await connection.js.publish(`unit.log.${partition}`, body, {
      expect: { lastSubjectSequence: last.get(partition) ?? 0 },
    });
    last.set(partition, ack.seq);
  };
  const results: UnitCost[] = [];
  for (const batch of [1, 16]) {
    const body = JSON.stringify(Array.from({ length: batch }, (_, i) => ({ key: `s${i}`, value: pad })));
    const appends = Math.max(16, Math.round(count / batch / 16) * 16);
    const sequential = Array.from({ length: 16 }, () => Promise.resolve());
    const measured = await measure(nats, `partition log append, ${batch} step(s) per append`, appends, 1, async (i) => {
      // 16 partitions in flight at once, each append after its partition's previous one (the fence needs it).
      const partition = i % 16;
      sequential[partition] = sequential[partition].then(() => append(partition, body));
      if (partition === 15) await Promise.all(sequential);
    });
    results.push({
      ...measured,
      messages: measured.messages / batch,
      natsCpuMs: measured.natsCpuMs / batch,
      clientCpuMs: measured.clientCpuMs / batch,
      kind: `${measured.kind} (per step)`,
    });
  }
  return results;
}

/** The journal's shape in the bench: WRITERS appends in flight, each of STEPS_PER_APPEND records. */
const WRITERS = 3;
const STEPS_PER_APPEND = 8;

/** `count` batches, WRITERS at a time, each after its writer's previous one; CPU of every process per batch. */
async function batches(
  count: number,
  cpuOfOthers: () => number,
  append: (writer: number) => Promise<unknown>,
): Promise<{ othersMs: number; writerMs: number; perSecond: number }> {
  const [others, writer, started] = [cpuOfOthers(), process.cpuUsage(), performance.now()];
  let next = 0;
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, i) => {
      while (next++ < count) await append(i);
    }),
  );
  const own = process.cpuUsage(writer);
  return {
    othersMs: ((cpuOfOthers() - others) * 1000) / count,
    writerMs: (own.user + own.system) / 1000 / count,
    perSecond: count / ((performance.now() - started) / 1000),
  };
}

/** A replica of the alternative: commits each batch it is sent (synced) and acknowledges it. */
function runLmdbReplica(): void {
  const dir = mkdtempSync(join(tmpdir(), 'unit-replica-'));
  const store = openStore(dir);
  const records = store.db<string>('ussd-session-records');
  const server = createServer((socket) => {
    socket.setNoDelay(true);
    socket.on('error', () => {}); // the writer hangs up when it is done
    const reader = new FrameReader((frame) => {
      const { id, batch } = frame as { id: number; batch: [string, string][] };
      void store.turn
        .write(() => {
          for (const [key, value] of batch) records.put(key, value);
        })
        .then(() => writeFrame(socket, id));
    });
    socket.on('data', (chunk) => reader.push(chunk));
  });
  server.listen(0, '127.0.0.1', () => process.send?.((server.address() as { port: number }).port));
  process.on('disconnect', () => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
}

/** The JetStream append as the journal makes it, and the LMDB alternative, at the bench's shape. */
async function journalAppendOptions(nats: NatsCluster, connection: ClusterConnection, count: number, pad: string) {
  const records = (writer: number, n: number): [string, string][] =>
    Array.from({ length: STEPS_PER_APPEND }, (_, i) => [`w${writer}.s${n}.${i}`, pad]);
  await connection.jsm.streams.add({ name: 'unit_journal', subjects: ['unit.journal.*'], num_replicas: 3 });
  const last = new Map<number, number>();
  let appended = 0;
  const natsCpu = () => nats.servers.reduce((sum, server) => sum + cpuSecondsOf(server.pid!), 0);
  const jetStream = await batches(count, natsCpu, async (writer) => {
    const ack = await connection.js.publish(`unit.journal.${writer}`, JSON.stringify(records(writer, appended++)), {
      expect: { lastSubjectSequence: last.get(writer) ?? 0 },
    });
    last.set(writer, ack.seq);
  });

  const replicas: ChildProcess[] = [
    fork(fileURLToPath(import.meta.url), ['lmdb-replica']),
    fork(fileURLToPath(import.meta.url), ['lmdb-replica']),
  ];
  const dir = mkdtempSync(join(tmpdir(), 'unit-writer-'));
  const store = openStore(dir);
  const db = store.db<string>('ussd-session-records');
  try {
    const ports = await Promise.all(
      replicas.map((child) => new Promise<number>((resolve) => child.once('message', resolve))),
    );
    const acked = new Map<number, () => void>();
    const sockets: Socket[] = await Promise.all(
      ports.map(
        (port) =>
          new Promise<Socket>((resolve) => {
            const socket = connect(port, '127.0.0.1', () => resolve(socket));
            socket.setNoDelay(true);
            const reader = new FrameReader((id) => {
              acked.get(id as number)?.();
              acked.delete(id as number);
            });
            socket.on('data', (chunk) => reader.push(chunk));
          }),
      ),
    );
    let id = 0;
    const lmdb = await batches(
      count,
      () => replicas.reduce((sum, child) => sum + cpuSecondsOf(child.pid!), 0),
      async (writer) => {
        const batch = records(writer, id);
        const sent = ++id;
        const replica = new Promise<void>((resolve) => acked.set(sent, resolve));
        for (const socket of sockets) writeFrame(socket, { id: sent, batch });
        await Promise.all([
          store.turn.write(() => {
            for (const [key, value] of batch) db.put(key, value);
          }),
          replica,
        ]);
      },
    );
    for (const socket of sockets) socket.destroy();
    return { jetStream, lmdb };
  } finally {
    for (const child of replicas) child.disconnect();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { 'no-sync': { type: 'boolean', default: false }, count: { type: 'string', default: '2000' } },
  });
  const count = Number(values.count);
  const binary = findNatsServer();
  if (!binary) throw new Error('nats-server is not installed');
  const nats = await startNatsCluster({ binary, syncAlways: !values['no-sync'] });
  const connections: ClusterConnection[] = [];
  try {
    const settings = (server: number) => ({
      NATS_URL: [nats.servers[server].url],
      NATS_REPLICAS: 3,
      NATS_PREFIX: 'unit',
    });
    const [a, b] = [await connectCluster(settings(0), 'unit-a'), await connectCluster(settings(1), 'unit-b')];
    connections.push(a, b);
    const store = await KvRecordStore.open<{ n: number; pad: string }>(a, { name: 'unit' });
    const pad = 'x'.repeat(300); // about a USSD session record's size
    const revisions = new Map<number, number>();
    for (let i = 0; i < 64; i++) revisions.set(i, await store.create([`k${i}`], { n: 0, pad }));
    b.nc.subscribe('unit.echo', { callback: (_error, msg) => void msg.respond(msg.data) });
    b.nc.subscribe('unit.sink', { callback: () => {} });
    await b.nc.flush();
    const results = [
      await measure(nats, 'KV read (leader)', count, 16, (i) => store.get([`k${i % 64}`])),
      await measure(nats, 'KV revision-checked write', count, 16, async (i) => {
        const key = i % 64;
        revisions.set(key, await store.update([`k${key}`], { n: i, pad }, revisions.get(key)!));
      }),
      await measure(nats, 'request/reply, other server', count, 16, () =>
        a.nc.request('unit.echo', pad, { timeout: 5_000 }),
      ),
      ...(await partitionLog(nats, a, count, pad)),
      await measure(nats, 'publish, other server', count, 1, async (i) => {
        a.nc.publish('unit.sink', pad);
        if (i % 100 === 99) await a.nc.flush();
      }),
    ];
    console.log(
      `| operation (${count} each${values['no-sync'] ? ', not synced' : ', sync_interval: always'}) | NATS msgs in+out | NATS CPU ms | client CPU ms |`,
    );
    console.log('|---|---|---|---|');
    for (const r of results)
      console.log(`| ${r.kind} | ${r.messages.toFixed(1)} | ${r.natsCpuMs.toFixed(3)} | ${r.clientCpuMs.toFixed(3)} |`);
    const options = await journalAppendOptions(nats, a, Math.max(WRITERS, Math.round(count / 4)), pad);
    console.log(
      `\n| one append of ${STEPS_PER_APPEND} steps' records, ${WRITERS} writers | appends/s | other processes' CPU ms | writer's CPU ms | all, ms |`,
    );
    console.log('|---|---|---|---|---|');
    for (const [kind, r] of [
      ['JetStream R3 (the NATS servers; the writer: its client)', options.jetStream],
      ['LMDB on the writer and 2 replicas over TCP, done at 2 of 3 (the replicas; the writer)', options.lmdb],
    ] as const)
      console.log(
        `| ${kind} | ${r.perSecond.toFixed(0)} | ${r.othersMs.toFixed(3)} | ${r.writerMs.toFixed(3)} | ${(r.othersMs + r.writerMs).toFixed(3)} |`,
      );
  } finally {
    for (const connection of connections) await connection.close();
    await nats.stop();
  }
}

if (process.argv[2] === 'lmdb-replica') runLmdbReplica();
else if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
