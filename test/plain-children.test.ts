// The processes tests spawn run without tap's process-info loader (test/helpers/plain-children.mjs, loaded by the
// tap config): it doubled every server's start. Other NODE_OPTIONS pass through; worker threads, which inherit the
// test process's flags, start.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';

const childOptions = (env?: NodeJS.ProcessEnv) =>
  execFileSync(process.execPath, ['-p', 'process.env.NODE_OPTIONS ?? "(unset)"'], { encoding: 'utf8', env })
    .trim()
    .replaceAll('"', ''); // tap's listener writes each option back quoted, which Node reads the same

t.test('this test process has the loader, a child it spawns does not', async (t) => {
  t.match(process.execArgv.join(' '), /@tapjs\/processinfo/, 'tap gave this process its loader');
  t.equal(childOptions(), '(unset)', 'a child with the inherited env');
  t.equal(childOptions({ PATH: process.env.PATH }), '(unset)', 'a child with an env of its own');
});

t.test('only the process-info loader is taken out of NODE_OPTIONS', async (t) => {
  const loader = '--import=file:///x/node_modules/@tapjs/processinfo/dist/esm/import.mjs';
  t.equal(childOptions({ ...process.env, NODE_OPTIONS: '--max-old-space-size=300' }), '--max-old-space-size=300');
  t.equal(
    childOptions({ ...process.env, NODE_OPTIONS: `--no-warnings "${loader}" --max-old-space-size=300` }),
    '--no-warnings --max-old-space-size=300',
  );
});

t.test('a worker thread starts with the flags it inherits', async (t) => {
  const worker = new Worker('require("node:worker_threads").parentPort.postMessage(process.execArgv)', { eval: true });
  const argv = await new Promise<string[]>((resolve, reject) => worker.once('message', resolve).once('error', reject));
  t.ok(
    argv.some((arg) => arg.includes('plain-children')),
    'it has the listener too',
  );
  await worker.terminate();
});
