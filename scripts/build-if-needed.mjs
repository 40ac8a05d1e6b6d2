// Builds dist/ when it is missing or older than any source file, so `npm start` never transpiles at run time.
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const marker = join(root, 'dist/src/main.js');

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const mtime = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (mtime > newest) newest = mtime;
  }
  return newest;
}

const sources = ['src', 'workers', 'bench', 'tsconfig.json'].map((p) => join(root, p)).filter(existsSync);
const newestSource = Math.max(...sources.map((p) => (statSync(p).isDirectory() ? newestMtime(p) : statSync(p).mtimeMs)));
if (!existsSync(marker) || statSync(marker).mtimeMs < newestSource) {
  console.log('building dist/ ...');
  execSync('npx tsc -p tsconfig.json', { cwd: root, stdio: 'inherit' });
}
