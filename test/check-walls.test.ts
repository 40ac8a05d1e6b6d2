// The lint walls (scripts/check-walls.mjs, run by `npm run lint`) fail on a tree that breaks them: a source file
// over 400 lines, a doc over 300, a source file without its thread header, and headers the import graph
// contradicts (a `main` file an actor host loads, an `actor host` file the main thread loads). A tree that keeps
// them passes (`npm run lint` runs it on this repository).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

const SCRIPT = join(process.cwd(), 'scripts/check-walls.mjs');

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'sar-walls-'));
  const all: Record<string, string> = {
    'tsconfig.json': JSON.stringify({
      compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true },
      include: ['src', 'workers'],
    }),
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function check(root: string) {
  const run = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8' });
  return { status: run.status, errors: run.stderr };
}

const GOOD = {
  'src/app/main.ts': "// Thread: main\nimport { shared } from '../shared.js';\nconsole.log(shared);\n",
  'src/shared.ts': '// Thread: any (pure)\nexport const shared = 1;\n',
  'src/host-only.ts': '// Thread: actor host\nexport const hosted = 2;\n',
  'workers/actor-host.ts':
    "// Thread: actor host\nimport { hosted } from '../src/host-only.js';\nimport { shared } from '../src/shared.js';\nconsole.log(hosted, shared);\n",
  'docs/short.md': '# Short\n',
  'README.md': '# Readme\n',
};

t.test('a tree that keeps every wall passes', async (t) => {
  const root = tree(GOOD);
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const { status, errors } = check(root);
  t.equal(status, 0, errors);
});

t.test('each broken wall fails the check, named', async (t) => {
  const root = tree({
    ...GOOD,
    'src/big.ts': `// Thread: main\n${'export const a = 1;\n'.repeat(400)}`,
    'src/bare.ts': 'export const bare = 3;\n',
    'src/wrong-form.ts': '// Main thread: a header in a form of its own.\nexport const form = 4;\n',
    'src/front.ts': '// Thread: main (front door)\nexport const front = 5;\n',
    'src/app/main.ts':
      "// Thread: main\nimport { shared } from '../shared.js';\nimport { hosted } from '../host-only.js';\nconsole.log(shared, hosted);\n",
    'workers/actor-host.ts':
      "// Thread: actor host\nimport { front } from '../src/front.js';\nimport { hosted } from '../src/host-only.js';\nconsole.log(front, hosted);\n",
    'docs/long.md': '# Long\n'.repeat(301),
  });
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const { status, errors } = check(root);
  t.equal(status, 1);
  t.match(errors, /src\/big\.ts: 401 lines, over 400/);
  t.match(errors, /src\/bare\.ts: the first line must say which thread runs it/);
  t.match(errors, /src\/wrong-form\.ts: the first line must say which thread runs it/);
  t.match(errors, /docs\/long\.md: 301 lines, over 300/);
  t.match(
    errors,
    /src\/front\.ts: says "Thread: main" but the actor host thread loads it: workers\/actor-host\.ts -> src\/front\.ts/,
  );
  t.match(
    errors,
    /src\/host-only\.ts: says "Thread: actor host" but the main thread loads it: src\/app\/main\.ts -> src\/host-only\.ts/,
  );
  t.notMatch(errors, /src\/shared\.ts/, 'a file that says any may be loaded anywhere');
  t.match(errors, /6 wall\(s\) broken/);
});

t.test('a type-only import does not load a file on another thread', async (t) => {
  const root = tree({
    ...GOOD,
    'src/types.ts': '// Thread: main\nexport interface Front { x: number }\n',
    'workers/actor-host.ts':
      "// Thread: actor host\nimport type { Front } from '../src/types.js';\nconst front: Front = { x: 1 };\nconsole.log(front);\n",
  });
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const { status, errors } = check(root);
  t.equal(status, 0, errors);
});
