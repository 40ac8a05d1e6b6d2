// Thread: main
// `npm run backup -- --out DIR`: a consistent online copy of DATA_DIR (src/store/backup.ts), safe to run beside the
// server that serves it. docs/operations.md, "Backup and restore", says how to restore and what to keep with it.
import { parseArgs } from 'node:util';
import * as v from 'valibot';
import { coreEnv } from '../app/config.js';
import { backupDataDir, BackupProblem } from '../store/backup.js';

const USAGE = `Usage: npm run backup -- --out DIR [--data-dir DIR]

  --out       a new (or empty) directory for the copy; it appears only once the copy is whole
  --data-dir  the server's DATA_DIR (default: the DATA_DIR variable, else ./data)

Prints one JSON line: the copy's directory, size, files and entries per database.`;

function fail(message: string, code: number): never {
  console.error(message);
  process.exit(code);
}

let values: { out?: string; 'data-dir'?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: { out: { type: 'string' }, 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  }));
} catch (error) {
  fail(`${(error as Error).message}\n\n${USAGE}`, 64);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
if (!values.out) fail(`--out is required\n\n${USAGE}`, 64);
const dataDir = values['data-dir'] ?? v.parse(coreEnv.DATA_DIR, process.env.DATA_DIR?.trim() || undefined);

try {
  console.log(JSON.stringify(await backupDataDir(dataDir, values.out)));
} catch (error) {
  if (error instanceof BackupProblem) fail(`backup: ${error.message}`, error.exitCode);
  fail(`backup failed: ${(error as Error).message}`, 1);
}
