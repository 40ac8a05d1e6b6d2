
// Protocol gateway throughput and latency: HTTP GET through the real server's gateway (child process)
// next to direct @grpc/grpc-js calls to the same upstream node (another child process), in one run,
// for a small answer (token params) and a large one (the entity list, BENCH_ENTITIES entities).
// Gateway runs vary an ignored query parameter so every request reaches the node; one more run sends
// identical requests, which share upstream calls while in flight.
import { printMarkdownTable } from './lib/table.js';
import type autocannon from 'autocannon';
import * as grpc from '@grpc/grpc-js';
import { BUNDLED_FILES, loadProtoFiles } from '../src/gateway/proto-root.js';
import { benchSeconds, measure, type LoadResult } from './lib/load.js';
import { startNode, startServerProcess, type BenchProcess } from './lib/process.js';

export interface GatewayBenchRow extends LoadResult {
  /** Upstream node CPU ms per request. */
  nodeCpuMsPerRequest: number;
}

interface Case {
  name: string;
  path: string;
  grpcPath: string;
  responseType: string;
}

const CASES: Case[] = [
  { name: 'small: token params', path: '/ixo/token/params', grpcPath: '/ixo.token.v1beta1.Query/Params', responseType: 'ixo.token.v1beta1.QueryParamsResponse' },
  { name: 'large: entity list', path: '/ixo/entity', grpcPath: '/ixo.entity.v1beta1.Query/EntityList', responseType: 'ixo.entity.v1beta1.QueryEntityListResponse' },
];

/** Requests that differ by an ignored query parameter, so none share an upstream call. */
function distinct(path: string): autocannon.Request[] {
  let n = 0;
  return [{ method: 'GET', setupRequest: (req: autocannon.Request) => ({ ...req, path: `${path}?bench=${++n}` }) }];
}

/** `concurrency` callers in a loop over one channel, each decoding its answer, for `seconds`. */
async function directLoad(name: string, target: string, grpcPath: string, decode: (bytes: Buffer) => unknown, seconds: number, concurrency: number, node: BenchProcess): Promise<GatewayBenchRow> {
  const client = new grpc.Client(target, grpc.credentials.createInsecure());
  const empty = Buffer.alloc(0);
  const once = () =>
    new Promise<void>((resolve, reject) =>
      client.makeUnaryRequest(grpcPath, (b: Buffer) => b, (b: Buffer) => b, empty, (error, bytes) => {
        if (error) return reject(error);
        decode(bytes!);
        resolve();
      }),
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
  const nodeCpuSeconds = node.cpuSeconds() - nodeCpu;
  client.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => +latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))].toFixed(2);
  return {
    name, requests: latencies.length, rps: latencies.length / elapsed, p50: at(0.5), p99: at(0.99), errors, non2xx: 0,
    cpuMsPerRequest: NaN, nodeCpuMsPerRequest: (nodeCpuSeconds * 1000) / latencies.length,
  };
}

async function viaGateway(name: string, server: BenchProcess, node: BenchProcess, options: Parameters<typeof measure>[2]): Promise<GatewayBenchRow> {
  const nodeCpu = node.cpuSeconds();
  const result = await measure(name, server, options);
  return { ...result, nodeCpuMsPerRequest: ((node.cpuSeconds() - nodeCpu) * 1000) / (result.requests || 1) };
}

function printRows(title: string, rows: GatewayBenchRow[]): void {
  const columns = ['run', 'requests', 'req/s', 'p50 ms', 'p99 ms', 'gateway CPU ms/req', 'node CPU ms/req', 'errors', 'non-2xx'];
  printMarkdownTable(title, columns, rows.map((r) => [
    r.name, r.requests, r.rps.toFixed(0), r.p50, r.p99, Number.isNaN(r.cpuMsPerRequest) ? '-' : r.cpuMsPerRequest.toFixed(4),
    r.nodeCpuMsPerRequest.toFixed(4), r.errors, r.non2xx,
  ]));
}

export async function benchGateway(): Promise<GatewayBenchRow[]> {
  const seconds = benchSeconds();
  const connections = Number(process.env.BENCH_CONNECTIONS ?? 32);
  const entities = process.env.BENCH_ENTITIES ?? '100';
  const root = loadProtoFiles(BUNDLED_FILES);

  const node = await startNode('dist/bench/gateway-node.js', { BENCH_ENTITIES: entities });
  const target = `127.0.0.1:${node.port}`;
  const rows: GatewayBenchRow[] = [];
  let server: BenchProcess | undefined;
  try {
    server = await startServerProcess({ GATEWAY_GRPC_TARGET: target, LOG_LEVEL: 'warn', ACTOR_THREADS: '1' });
    for (const { name, path, grpcPath, responseType } of CASES) {
      const type = root.lookupType(responseType);
      const warm = await fetch(`http://127.0.0.1:${server.port}${path}`);
      const size = (await warm.arrayBuffer()).byteLength;
      if (warm.status !== 200) throw new Error(`${path} answered ${warm.status}`);
      const direct = await directLoad(`direct gRPC, ${name}`, target, grpcPath, (bytes) => type.decode(bytes), seconds, connections, node);
      const gateway = await viaGateway(`gateway, ${name} (${size} B JSON)`, server, node, { duration: seconds, connections, requests: distinct(path) });
      rows.push(direct, gateway);
      console.log(
        `${name}: gateway/direct req/s ${((gateway.rps / direct.rps) * 100).toFixed(1)}%, ` +
          `p50 ${(gateway.p50 / direct.p50).toFixed(2)}x, p99 ${(gateway.p99 / direct.p99).toFixed(2)}x, ` +
          `gateway CPU ${gateway.cpuMsPerRequest.toFixed(3)} ms/req`,
      );
    }
    const shared = await viaGateway('gateway, large: entity list, identical requests (shared in flight)', server, node, { duration: seconds, connections, path: '/ixo/entity' });
    rows.push(shared);
  } finally {
    await server?.stop();
    await node.stop();
  }
  printRows(`Protocol gateway: ${connections} connections / concurrent calls, ${seconds} s per run, ${entities} entities in the list, server pid CPU from /proc`, rows);
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) await benchGateway();
