// The upstream for the gateway benchmark: the embedded local query node as its own process, over the
// sample data plus BENCH_ENTITIES generated entities (so the entity list is a large answer).
// Prints LISTENING <port>.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_FIXTURE, LocalQueryNode, readFixture } from '../src/gateway/local-node/server.js';
import { openStore } from '../src/store/env.js';

const count = Number(process.env.BENCH_ENTITIES ?? 100);
const fixture = readFixture(DEFAULT_FIXTURE);
// biome-ignore lint/suspicious/noExplicitAny: fixture records are JSON of any protobuf message
const template = (fixture.records.entity as Record<string, any>[])[0];
const entities = Array.from({ length: count }, (_, i) => {
  const id = `did:ixo:entity:bench${String(i).padStart(27, '0')}`;
  return { ...template, id, metadata: { ...template.metadata, version_id: `bench-${i}` } };
});
fixture.records.entity = entities;

const dataDir = mkdtempSync(join(tmpdir(), 'sar-bench-node-'));
const store = openStore(dataDir);
const node = await LocalQueryNode.start({ db: store.db<Uint8Array>('gateway-local-node'), fixture });
console.log(`LISTENING ${node.target.slice(node.target.lastIndexOf(':') + 1)}`);

process.on('SIGTERM', async () => {
  await node.stop(500);
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
});
