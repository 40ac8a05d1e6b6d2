// Thread: main
// Mints UCANs for trying the oracle by hand:
//   node dist/src/tools/mint-ucan.js --oracle-did <did> [--ttl 300] [--delegation-ttl 86400] [--key-file ~/.sar-user.key] [--json]
// Prints the user's DID, a user-to-oracle delegation (x-ucan-delegation) and an invocation (Authorization: Bearer,
// with X-Auth-Type: ucan). Without --key-file a fresh user key is made each run; with it, the key is read from the
// file, or created there (mode 0600) the first time.
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { formatKey, generateKey, mintDelegation, mintInvocation, parseKey } from '../oracle/auth/mint.js';

export {
  createDelegation,
  createInvocation,
  encodeArtifact,
  formatKey,
  generateKey,
  mintDelegation,
  mintInvocation,
  ORACLE_CAPABILITY,
  parseKey,
  type MintOptions,
} from '../oracle/auth/mint.js';

const USAGE =
  'usage: mint-ucan --oracle-did <did> [--ttl <seconds, default 300>] [--delegation-ttl <seconds, default 86400>] [--key-file <path>] [--json]';

async function userKey(keyFile: string | undefined) {
  if (!keyFile) return generateKey();
  try {
    return parseKey(await readFile(keyFile, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const key = await generateKey();
    await writeFile(keyFile, `${formatKey(key)}\n`, { mode: 0o600, flag: 'wx' });
    return key;
  }
}

function seconds(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive whole number of seconds`);
  return n;
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      'oracle-did': { type: 'string', default: process.env.ORACLE_DID },
      ttl: { type: 'string' },
      'delegation-ttl': { type: 'string' },
      'key-file': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return void console.log(USAGE);
  const oracleDid = values['oracle-did'];
  if (!oracleDid?.startsWith('did:'))
    throw new Error(`--oracle-did is required (the oracle logs its DID at start-up)\n${USAGE}`);
  const issuer = await userKey(values['key-file']);
  const delegation = await mintDelegation({
    issuer,
    audience: oracleDid,
    ttlSeconds: seconds(values['delegation-ttl'], 86_400, 'delegation-ttl'),
  });
  const invocation = await mintInvocation({ issuer, audience: oracleDid, ttlSeconds: seconds(values.ttl, 300, 'ttl') });
  if (values.json) {
    console.log(JSON.stringify({ userDid: issuer.did(), oracleDid, delegation, invocation }, null, 2));
    return;
  }
  console.log(`user DID: ${issuer.did()}\n`);
  console.log(`x-ucan-delegation: ${delegation}\n`);
  console.log(`Authorization: Bearer ${invocation}\nX-Auth-Type: ucan\n`);
  console.log(`curl -H 'X-Auth-Type: ucan' -H 'Authorization: Bearer ${invocation}' http://127.0.0.1:3000/sessions`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
