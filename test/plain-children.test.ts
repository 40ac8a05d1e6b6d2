// The processes tests spawn run without tap's process-info loader (test/helpers/plain-children.ts, loaded by the
// tap config): it doubled every server's start. Other NODE_OPTIONS pass through.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { withoutProcessInfo } from './helpers/plain-children.js';

const childOptions = (env?: NodeJS.ProcessEnv) =>
  execFileSync(process.execPath, ['-p', 'process.env.NODE_OPTIONS ?? "(unset)"'], { encoding: 'utf8', env }).trim();

t.test('this test process has the loader, a child it spawns does not', async (t) => {
  t.match(process.execArgv.join(' '), /@tapjs\/processinfo/, 'tap gave this process its loader');
  t.equal(childOptions(), '(unset)', 'a child with the inherited env');
  t.equal(childOptions({ PATH: process.env.PATH }), '(unset)', 'a child with an env of its own');
  // tap's listener writes the options back quoted, which Node reads the same.
  t.match(childOptions({ ...process.env, NODE_OPTIONS: '--max-old-space-size=300' }), /^"?--max-old-space-size=300"?$/);
});

t.test('only the process-info loader is taken out of NODE_OPTIONS', async (t) => {
  const loader = '--import=file:///x/node_modules/@tapjs/processinfo/dist/esm/import.mjs';
  t.equal(withoutProcessInfo(`"${loader}"`), '');
  t.equal(withoutProcessInfo(`--enable-source-maps ${loader} --no-warnings`), '--enable-source-maps --no-warnings');
  t.equal(withoutProcessInfo('--loader=file:///y/@tapjs/processinfo/dist/esm/loader.mjs --trace-gc'), '--trace-gc');
  t.equal(withoutProcessInfo('--import=tsx'), '--import=tsx');
  t.equal(withoutProcessInfo(undefined), '');
});
