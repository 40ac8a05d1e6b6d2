// A production install, the way an operator makes one: the project packed (`npm pack`, what package.json's `files`
// ships), unpacked into an empty folder with the lockfile and installed without development dependencies
// (`npm ci --omit=dev`, from the npm cache: --prefer-offline), then started and driven through every face by the
// platform smoke (scripts/platform-smoke.mjs --root): a USSD walk, a streamed chat turn, /ws, Socket.IO, a gateway
// query, /docs, /metrics and a drain, on both engines. Before it, the static check that every package the shipped
// code imports is a dependency (scripts/check-runtime-deps.mjs), which names the package a failed install would not.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
t.setTimeout(300_000);

// npm's own environment (npm test runs this file) would carry its settings into the child, its project folder
// (local_prefix) among them; only where the cache and registry are stays.
const env = Object.fromEntries(
  Object.entries(process.env).filter(
    ([name]) => !/^npm_/i.test(name) || /^npm_config_(cache|registry|userconfig)$/i.test(name),
  ),
);
const npm = ([command, ...args]: string[], cwd: string) =>
  run('npm', [command, '--no-audit', '--no-fund', '--loglevel=error', ...args], { cwd, env, timeout: 240_000 });
const work = mkdtempSync(join(tmpdir(), 'sar-install-'));
// The promise API's rm: it unlinks the install's 13,000 files concurrently (4 s where rmSync took 28 s, disk busy).
t.teardown(() => rm(work, { recursive: true, force: true }));
// The pack (seconds of npm reading the tree) runs while the static check does.
const packed = npm(['pack', '--pack-destination', work], ROOT).then(
  () => undefined,
  (error: unknown) => error,
);

t.test('every package the shipped code imports is a dependency', async (t) => {
  const { stdout } = await run(process.execPath, ['scripts/check-runtime-deps.mjs', '--json'], { cwd: ROOT });
  const { imports, missing, unused } = JSON.parse(stdout) as Record<string, string[]>;
  t.same(missing, [], 'no runtime import is a devDependency or undeclared');
  t.same(unused, [], 'no dependency is left that nothing imports');
  t.ok(imports.includes('ws') && imports.includes('autocannon'), 'the check sees the imports that were missing');
});

t.test('the packed project installs with --omit=dev and serves every face', async (t) => {
  const app = join(work, 'app');
  mkdirSync(app);
  t.equal(await packed, undefined, 'npm pack ran');
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
  t.ok(tarball, 'npm pack made a tarball');
  await run('tar', ['xzf', join(work, tarball!), '-C', app, '--strip-components=1']);
  t.same(
    readdirSync(app).sort(),
    ['README.md', 'dist', 'fixtures', 'package.json', 'proto', 'schemas', 'scripts', 'ussd-services'],
    'the package ships what the server reads at run time, and no sources',
  );
  copyFileSync(join(ROOT, 'package-lock.json'), join(app, 'package-lock.json'));
  await npm(['ci', '--omit=dev', '--prefer-offline'], app);
  const installed = readdirSync(join(app, 'node_modules'));
  t.notOk(installed.includes('tap') || installed.includes('tsx'), 'no development dependency was installed');

  // The load tool runs from the same install (its --help loads every module of it, autocannon included), while
  // the servers below start.
  const load = npm(['run', 'load', '--', '--help'], app).then(
    ({ stdout }) => stdout,
    (error: { stdout?: string }) => String(error.stdout ?? error),
  );

  // Both engines at once, each a server of its own on free ports: auto (the native engine where a build loads, as
  // production runs) and the portable one (ws and Socket.IO's node attach).
  const smokes = await Promise.all(
    ['auto', 'node'].map((engine) =>
      run(process.execPath, ['scripts/platform-smoke.mjs', '--root', app, '--engine', engine], {
        cwd: ROOT,
        timeout: 180_000,
      }).then(
        ({ stdout }) => ({ engine, stdout }),
        (error: { stdout?: string }) => ({ engine, stdout: String(error.stdout ?? error) }),
      ),
    ),
  );
  t.match(await load, /--target/, 'npm run load works in a production install');
  for (const { engine, stdout } of smokes) {
    t.comment(stdout.trim());
    t.match(stdout, `server in ${app}`, `${engine}: the server ran from the production install`);
    t.notMatch(stdout, /^not ok/m, `${engine}: no check failed`);
    t.match(stdout, /^PASS Node\.js v\d+/m, `${engine}: every face answered`);
  }
});
