// Protocol gateway: HTTP GET through the real server's gateway (child process) next to direct @grpc/grpc-js
// calls to the same upstream node (another child process), for a small answer (token params) and a large one
// (the entity list, BENCH_ENTITIES entities). The direct calls are the ceiling for latency; they cannot share
// the HTTP client, so the ratios that count here are p50 and the gateway's own CPU per request. Gateway runs
// vary an ignored query parameter so every request reaches the node.
import type autocannon from 'autocannon';
import * as grpc from '@grpc/grpc-js';
import { BUNDLED_FILES, loadProtoFiles } from '../src/gateway/proto-root.js';
import { measure, percentile } from './lib/load.js';
import type { BenchOptions } from './lib/options.js';
import { startNode, startServerProcess, type BenchProcess } from './lib/process.js';
import { printRows, row, type Measured, type Row } from './lib/report.js';

interface Case {
  name: string;
  path: string;
  grpcPath: string;
  responseType: string;
}

const CASES: Case[] = [
  {
    name: 'small query (token params)',
    path: '/ixo/token/params',
    grpcPath: '/ixo.token.v1beta1.Query/Params',
    responseType: 'ixo.token.v1beta1.QueryParamsResponse',
  },
  {
    name: 'large query (entity list)',
    path: '/ixo/entity',
    grpcPath: '/ixo.entity.v1beta1.Query/EntityList',
    responseType: 'ixo.entity.v1beta1.QueryEntityListResponse',
  },
];

/** Requests that differ by an ignored query parameter, so none share an upstream call. */
function distinct(path: string): autocannon.Request[] {
  let n = 0;
  return [{ method: 'GET', setupRequest: (req: autocannon.Request) => ({ ...req, path: `${path}?bench=${++n}` }) }];
}

/** `concurrency` callers in a loop over one channel, each decoding its answer, for `seconds`. */
async function directLoad(
  target: string,
  grpcPath: string,
  decode: (bytes: Buffer) => unknown,
  seconds: number,
  concurrency: number,
  node: BenchProcess,
): Promise<Measured> {
  const client = new grpc.Client(target, grpc.credentials.createInsecure());
  const empty = Buffer.alloc(0);
  const once = () =>
    new Promise<void>((resolve, reject) =>
      client.makeUnaryRequest(
        grpcPath,
        (b: Buffer) => b,
        (b: Buffer) => b,
        empty,
        (error, bytes) => {
          if (error) return reject(error);
          decode(bytes!);
          resolve();
        },
      ),
    );
  for (let i = 0; i < 200; i++) await once();
  const latencies: number[] = [];
  let errors = 0;
  const nodeCpu = node.cpuSeconds();
  const started = performance.now();
  const end = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const sent = performance.now();
        await once().catch(() => errors++);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const nodeCpuMsPerOp = ((node.cpuSeconds() - nodeCpu) * 1000) / latencies.length;
  client.close();
  latencies.sort((a, b) => a - b);
  return {
    unit: 'request',
    count: latencies.length,
    throughput: latencies.length / elapsed,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    // No server between client and node: the gateway CPU this row stands against is zero by construction.
    cpuMsPerOp: NaN,
    rssBytes: node.rssBytes(),
    errors,
    extra: { nodeCpuMsPerOp },
  };
}

async function viaGateway(
  server: BenchProcess,
  node: BenchProcess,
  options: Parameters<typeof measure>[1],
): Promise<Measured> {
  const nodeCpu = node.cpuSeconds();
  const measured = await measure(server, options);
  return {
    ...measured,
    extra: { ...measured.extra, nodeCpuMsPerOp: ((node.cpuSeconds() - nodeCpu) * 1000) / (measured.count || 1) },
  };
}

export async function benchGateway(options: BenchOptions): Promise<Row[]> {
  const { seconds, connections } = options;
  const entities = process.env.BENCH_ENTITIES ?? '100';
  const root = loadProtoFiles(BUNDLED_FILES);

  const node = await startNode('dist/bench/gateway-node.js', { BENCH_ENTITIES: entities });
  const target = `127.0.0.1:${node.port}`;
  const rows: Row[] = [];
  let server: BenchProcess | undefined;
  try {
    server = await startServerProcess({ GATEWAY_GRPC_TARGET: target, LOG_LEVEL: 'warn', ACTOR_THREADS: '1' });
    for (const { name, path, grpcPath, responseType } of CASES) {
      const type = root.lookupType(responseType);
      const warm = await fetch(`http://127.0.0.1:${server.port}${path}`);
      const size = (await warm.arrayBuffer()).byteLength;
      if (warm.status !== 200) throw new Error(`${path} answered ${warm.status}`);
      const direct = row(
        'gateway',
        `direct grpc-js, ${name}`,
        await directLoad(target, grpcPath, (bytes) => type.decode(bytes), seconds, connections, node),
      );
      const gateway = row(
        'gateway',
        `gateway, ${name}, ${size} B JSON`,
        await viaGateway(server, node, { duration: seconds, connections, requests: distinct(path) }),
        direct,
      );
      rows.push(direct, gateway);
    }
  } finally {
    await server?.stop();
    await node.stop();
  }
  printRows(
    `Protocol gateway: ${connections} connections / concurrent calls, ${seconds} s per run, ${entities} entities in the list (RSS of direct rows: the node's)`,
    rows,
  );
  return rows;
}
