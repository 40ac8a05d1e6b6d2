// `npm run ussd:check`: each kind of problem (unknown state, unreachable state, dead end, duplicate key, a key that
// clashes with navigation, a missing translation, a screen that cannot fit) is refused by the checker with its
// file and line, and the same directory is refused at start (exit 78, the same line). The shipped built-in
// service and the example of docs/ussd-services.md pass, and --render prints every state × language × page.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { main } from '../dist/src/tools/ussd-check.js';
import { docExampleDir } from './helpers/ussd-doc-example.js';

const ROOT = join(import.meta.dirname, '..');
const FIXTURES = join(import.meta.dirname, 'fixtures', 'ussd-check');

/** Each fixture directory and the problem line the checker must print for it. */
const BROKEN: Record<string, RegExp> = {
  'unknown-state': /service\.yaml:22: states\.hello\.options\.1\.next: no state named "help"/,
  unreachable: /service\.yaml:25: states\.lost: unreachable: no start, option, branch or back leads to lost/,
  'dead-end': /service\.yaml:23: states\.stuck: a dead end: a menu with no option, back, home or exit/,
  'duplicate-key':
    /service\.yaml:22: states\.hello\.options\.1\.key: duplicate key 1: option 1 has it without a condition/,
  'navigation-clash': /service\.yaml:22: states\.hello\.options\.1\.key: the key 0 is the back key here/,
  'missing-translation': /service\.yaml:24: states\.bye\.text: no sw text/,
  'too-long':
    /service\.yaml:22: states\.hello\.options\.1\.text: page 2 of 2 \(sw\) is 215 characters, over the limit of 182/,
};

function check(argv: string[]): { code: number; out: string; err: string } {
  let out = '';
  let err = '';
  const code = main(
    argv,
    (text) => (out += `${text}\n`),
    (text) => (err += `${text}\n`),
  );
  return { code, out, err };
}

function run(command: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, command, { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('each kind of problem is refused with its file, line and what is wrong', async (t) => {
  for (const [name, line] of Object.entries(BROKEN)) {
    const result = check([join(FIXTURES, name)]);
    t.equal(result.code, 1, `${name}: exit 1`);
    t.match(result.err, line, `${name}: ${line}`);
    t.match(result.err, /^1 problem$/m, `${name}: that problem alone`);
  }
});

t.test('the same directories are refused at start: exit 78 with the same line', async (t) => {
  const results = await Promise.all(
    Object.keys(BROKEN).map(async (name) => {
      const dataDir = mkdtempSync(join(tmpdir(), 'sar-ussd-check-'));
      t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
      const env = {
        PORT: '0',
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'fatal',
        ACTOR_THREADS: '1',
        USSD_SERVICES_DIR: join(FIXTURES, name),
      };
      return [name, await run(['dist/src/app/main.js'], env)] as const;
    }),
  );
  for (const [name, result] of results) {
    t.equal(result.code, 78, `${name}: exit 78`);
    t.match(result.stderr, BROKEN[name] as RegExp, `${name}: the checker's line`);
    t.notMatch(result.stdout, /"msg":"listening"/, `${name}: nothing listened`);
  }
});

t.test('the built-in service and the documented example pass', async (t) => {
  const builtin = check([join(ROOT, 'ussd-services')]);
  t.equal(builtin.code, 0, builtin.err);
  t.equal(builtin.out, 'ok: builtin@1.0.0\n');
  const example = check([docExampleDir(t, false), join(ROOT, 'ussd-services', 'builtin.yaml')]);
  t.equal(example.code, 0, example.err);
  t.equal(example.out, 'ok: market@1.0.0, builtin@1.0.0\n');
});

t.test('--render prints every state in every language on every page, each within the limit', async (t) => {
  const { code, out } = check(['--render', docExampleDir(t, false)]);
  t.equal(code, 0);
  t.match(out, /\nok: market@1\.0\.0\n$/);
  const screens = out
    .replace(/ok: .*\n$/, '')
    .split(/^--- /m)
    .slice(1);
  const heads = screens.map((screen) => screen.split('\n')[0]);
  // 7 states in 2 languages, and per language one more page of crops and the welcome's exit screen.
  t.equal(heads.length, 2 * (7 + 1 + 1), heads.join('\n'));
  for (const screen of screens) {
    const [head, ...body] = screen.trimEnd().split('\n');
    const answer = body.join('\n');
    t.ok(answer.length <= 182, `${head}: ${answer.length} characters`);
    t.match(head, new RegExp(`, ${answer.length}/182$`), `${head}: its length said`);
  }
  const crops = (language: string, page: string) =>
    screens.find((screen) => screen.startsWith(`crops [${language}] page ${page},`));
  t.match(crops('en', '1/2'), /^CON Choose a crop:\n1\. Maize\n[\s\S]*\n11\. Groundnuts\n98\. More\n0\. Back$/m);
  t.match(crops('en', '2/2'), /^CON 12\. Coffee \(cherry\)\n13\. Tomatoes\n14\. Onions\n15\. Cabbages\n0\. Back\n$/m);
  t.match(crops('sw', '1/2'), /\n98\. Zaidi\n0\. Rudi\n$/);
  t.match(
    screens.find((screen) => screen.startsWith('subscribed [sw]')),
    /^END Asante <farmerName>\. Bei za ekari <acres> zitakuja kwa SMS kila Jumatatu\.$/m,
  );
  t.match(out, /^=== market@1\.0\.0 Market prices: \*500#, \*500\*1# \(at crops\); limit 182$/m);

  const builtin = check(['--render', join(ROOT, 'ussd-services')]).out;
  t.match(
    builtin,
    '--- preMenu [en] page 1/1, 67/182\nCON Welcome! Choose an option:\n1. Know More\n2. Account Menu\n*. Exit\n',
  );
  t.match(builtin, '--- preMenu [en] exit, 45/182\nEND Thank you for using our service. Goodbye!\n');
});

t.test('the command: exit 0 clean, 1 on a problem, 2 and the usage on a bad command line', async (t) => {
  const clean = await run(['dist/src/tools/ussd-check.js', 'ussd-services']);
  t.equal(clean.code, 0, clean.stderr);
  const broken = await run(['dist/src/tools/ussd-check.js', join(FIXTURES, 'dead-end')]);
  t.equal(broken.code, 1);
  t.match(broken.stderr, BROKEN['dead-end'] as RegExp);
  const flag = await run(['dist/src/tools/ussd-check.js', '--nope', 'ussd-services']);
  t.equal(flag.code, 2);
  t.match(flag.stderr, /Unknown option '--nope'[\s\S]*Usage: npm run ussd:check/);
  const none = check([]);
  t.equal(none.code, 2);
  t.match(none.err, /Name a services directory or a definition file\.[\s\S]*Usage:/);
  const missing = check([join(FIXTURES, 'no-such-dir')]);
  t.equal(missing.code, 1);
  t.match(missing.err, /no-such-dir:0: cannot read: ENOENT/);
  t.equal(check(['--help']).code, 0);
});
