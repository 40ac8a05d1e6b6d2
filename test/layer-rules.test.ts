// The layer rules (.dependency-cruiser.cjs, run by `npm run lint:layers`) fail on a tree that breaks them. Here the
// storage port's wall: a face (src/ussd, src/oracle, src/gateway) importing src/cluster, even for a type, is named;
// the composition root and src/cluster/records may import both. A tree that keeps the rules passes (`npm run lint`
// runs them on this repository).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const CRUISE = join(process.cwd(), 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
const CONFIG = join(process.cwd(), '.dependency-cruiser.cjs');

function cruise(files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'sar-layers-'));
  const all: Record<string, string> = {
    'tsconfig.json': JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
      include: ['src'],
    }),
    'src/cluster/connection.ts': 'export interface ClusterConnection { prefix: string }\n',
    'src/ussd/repositories.ts': 'export interface UssdRecords { sessions(): Promise<string[]> }\n',
    'src/cluster/records/ussd/index.ts':
      "import type { ClusterConnection } from '../../connection.js';\n" +
      "import type { UssdRecords } from '../../../ussd/repositories.js';\n" +
      'export const open = (c: ClusterConnection): UssdRecords => ({ sessions: async () => [c.prefix] });\n',
    'src/app/records.ts':
      "import { open } from '../cluster/records/ussd/index.js';\nexport const records = open({ prefix: 'p' });\n",
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const run = spawnSync(process.execPath, [CRUISE, 'src', '--config', CONFIG], { cwd: root, encoding: 'utf8' });
  rmSync(root, { recursive: true, force: true });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

t.test('a face that reaches its records through the port passes', async (t) => {
  const { status, output } = cruise({
    'src/ussd/index.ts':
      "import type { UssdRecords } from './repositories.js';\nexport const face = (r: UssdRecords) => r.sessions();\n",
  });
  t.equal(status, 0, output);
});

t.test('a face importing src/cluster fails the rules, named, even for a type', async (t) => {
  const { status, output } = cruise({
    'src/ussd/index.ts':
      "import type { ClusterConnection } from '../cluster/connection.js';\nexport type C = ClusterConnection;\n",
    'src/gateway/index.ts': "import { open } from '../cluster/records/ussd/index.js';\nexport const g = open;\n",
  });
  t.ok(status !== 0 && status !== null, output);
  t.match(output, /faces-know-no-cluster: src\/ussd\/index\.ts → src\/cluster\/connection\.ts/);
  t.match(output, /faces-know-no-cluster: src\/gateway\/index\.ts → src\/cluster\/records\/ussd\/index\.ts/);
  t.notMatch(output, /src\/app\/records\.ts →/, 'the composition root may import the engines');
});

t.test('the ground floor importing any floor above it fails the rules, named', async (t) => {
  const { status, output } = cruise({
    'src/base/log.ts': "import type { UssdRecords } from '../ussd/repositories.js';\nexport type R = UssdRecords;\n",
    'src/base/errors.ts': "import type { R } from './log.js';\nexport type E = R;\n",
  });
  t.ok(status !== 0 && status !== null, output);
  t.match(output, /ground-floor-imports-nothing-above: src\/base\/log\.ts → src\/ussd\/repositories\.ts/);
  t.notMatch(output, /src\/base\/errors\.ts →/, 'the ground floor may import itself');
});
