// Builds dist/ when it is missing or older than any source file, so `npm start` never transpiles at run time.
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
// The playground bundle is built last, so its page marks a complete build.
const marker = join(root, 'dist/playground/index.html');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

const sources = ['src', 'workers', 'bench', 'web', 'tsconfig.json', 'scripts/build-playground.mjs']
  .map((p) => join(root, p))
  .filter(existsSync);
const newestSource = Math.max(
  ...sources.map((p) => (statSync(p).isDirectory() ? newestMtime(p) : statSync(p).mtimeMs)),
);
if (!existsSync(marker) || statSync(marker).mtimeMs < newestSource) {
  console.log('building dist/ ...');
  execSync('npm run build', { cwd: root, stdio: 'inherit' });
}
