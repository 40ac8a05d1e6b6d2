// `node dist/bench/cluster-anatomy.js [--no-sync] [--sessions N] [--turns N]`: what a USSD step and a chat turn send
// over NATS, by purpose. Starts 3 NATS servers and 3 nodes (as bench:cluster does), listens to every subject of the
// account (`>`) with one extra connection, then runs whole USSD sessions (bench/ussd.ts's steps) and streamed chat
// turns one at a time, each through node i % 3, and counts the client messages it saw per operation by kind. What a
// client cannot see (JetStream's replication between servers, its Raft) is the rest of each server's in + out count.
import { connect } from '@nats-io/transport-node';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { startLocalNodes } from '../src/tools/local-nodes.js';
import { findNatsServer, startNatsCluster } from '../src/tools/local-nats-cluster.js';
import { createSessions, oracleKeys, warmInvocation } from './lib/oracle.js';
import { turnRequest } from './sse.js';
import { STEPS } from './ussd.js';
import { natsMessages } from './lib/nats.js';

/** A subject's purpose. */
function kindOf(subject: string): string {
  if (subject.startsWith('$JS.API.STREAM.MSG.GET.'))
    return `KV read ${subject.slice('$JS.API.STREAM.MSG.GET.KV_sar_'.length)}`;
  if (subject.startsWith('$KV.')) return `KV write ${subject.split('.')[1].replace(/^sar_/, '')}`;
  if (subject.startsWith('$JS.API.')) return `JetStream API ${subject.split('.').slice(2, 4).join('.')}`;
  if (subject.startsWith('$JS.')) return 'JetStream acks/flow';
  if (subject.startsWith('sar.journal.')) return `journal append ${subject.split('.')[2]}`;
  if (/^sar\.actor\.\d+$/.test(subject)) return 'routed request';
  if (subject.startsWith('sar.events.')) return 'event';
  if (/^_INBOX\.[^.]+\.out$/.test(subject)) return 'stream frame (owner -> caller)';
  if (/^_INBOX\.[^.]+\.in$/.test(subject)) return 'stream control/ping (caller -> owner)';
  if (subject.startsWith('_INBOX.')) return 'reply';
  return subject.split('.').slice(0, 2).join('.');
}

export async function main(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'no-sync': { type: 'boolean', default: false },
      sessions: { type: 'string', default: '30' },
      turns: { type: 'string', default: '30' },
    },
  });
  const binary = findNatsServer();
  if (!binary) throw new Error('nats-server is not installed');
  const keys = await oracleKeys();
  const invocation = await warmInvocation(keys);
  const nats = await startNatsCluster({ binary, syncAlways: !values['no-sync'] });
  try {
    const cluster = await startLocalNodes({
      natsUrl: nats.urls,
      keys: { ORACLE_PRIVATE_KEY: keys.oracleKey },
      env: { ACTOR_THREADS: '1', RATE_LIMIT_ALLOWLIST: '127.0.0.0/8,::1', LOG_LEVEL: 'warn' },
    });
    const sniffer = await connect({ servers: nats.servers[0].url });
    try {
      const ports = cluster.nodes.map((node) => node.port);
      let counts = new Map<string, number>();
      sniffer.subscribe('>', {
        callback: (_error, msg) => void counts.set(kindOf(msg.subject), (counts.get(kindOf(msg.subject)) ?? 0) + 1),
      });
      await sniffer.flush();
      const measured = async (label: string, operations: number, run: () => Promise<void>) => {
        await run(); // warm: buckets opened, actors started
        await sniffer.flush();
        counts = new Map();
        const before = await natsMessages(nats);
        await run();
        await new Promise((resolve) => setTimeout(resolve, 200));
        await sniffer.flush();
        const total = (await natsMessages(nats)) - before;
        const seen = [...counts.values()].reduce((a, b) => a + b, 0);
        console.log(
          `\n## ${label}: per operation (${operations} operations; NATS servers' in + out ${(total / operations).toFixed(1)}, of which client messages seen here ${(seen / operations).toFixed(1)})`,
        );
        console.log('| kind | messages per operation |\n|---|---|');
        for (const [kind, count] of [...counts].sort((a, b) => b[1] - a[1]))
          console.log(`| ${kind} | ${(count / operations).toFixed(2)} |`);
      };
      const sessions = Number(values.sessions);
      let round = 0;
      await measured('USSD step (whole sessions, step i through node i % 3)', sessions * STEPS.length, async () => {
        round++;
        for (let s = 0; s < sessions; s++) {
          const sessionId = `anatomy-${round}-${s}`;
          for (const [i, text] of STEPS.entries()) {
            const body = JSON.stringify({ sessionId, serviceCode: '*123#', phoneNumber: '+254700000001', text });
            await (
              await fetch(`http://127.0.0.1:${ports[(s + i) % 3]}/api/ussd`, {
                method: 'POST',
                headers: { 'content-type': 'application/json' },
                body,
              })
            ).text();
          }
        }
      });
      const turns = Number(values.turns);
      const chats = await createSessions({ port: ports[0], ports }, invocation, 3);
      const { headers, body } = turnRequest(invocation);
      await measured('chat turn (streamed, session i through node i % 3)', turns, async () => {
        for (let t = 0; t < turns; t++) {
          await (
            await fetch(`http://127.0.0.1:${ports[t % 3]}/messages/${chats[t % 3]}`, { method: 'POST', headers, body })
          ).text();
        }
      });
    } finally {
      await sniffer.close();
      await cluster.stop();
    }
  } finally {
    await nats.stop();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    },
  );
}
