// The oracle's identity (key from the environment or DATA_DIR), its configuration, and the mint-ucan tool.
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import * as v from 'valibot';
import { oracleEnv } from '../dist/src/oracle/config.js';
import { loadOracleIdentity, ORACLE_KEY_FILE } from '../dist/src/oracle/identity/identity.js';
import { createOracleAuthenticator } from '../dist/src/oracle/auth/index.js';
import { formatKey, generateKey, mintInvocation } from '../dist/src/tools/mint-ucan.js';

const run = promisify(execFile);
const MINT = new URL('../dist/src/tools/mint-ucan.js', import.meta.url).pathname;

function recordingLog() {
  const lines: Array<{ fields: Record<string, unknown>; message: string }> = [];
  const record = (fields: Record<string, unknown>, message: string) => void lines.push({ fields, message });
  return { lines, log: { info: record, warn: record } as never };
}

t.test(
  'without ORACLE_PRIVATE_KEY the first start creates DATA_DIR/oracle-key (0600) and later starts reuse it',
  async (t) => {
    const dataDir = join(t.testdir(), 'data');
    const { lines, log } = recordingLog();
    const first = await loadOracleIdentity({ DATA_DIR: dataDir }, log);
    const path = join(dataDir, ORACLE_KEY_FILE);
    t.equal(statSync(path).mode & 0o777, 0o600);
    t.equal(first.keySource, 'generated');
    t.match(first.did, /^did:key:z6Mk/);
    t.equal(first.did, first.keyDid);
    t.equal(first.name, 'oracle');
    t.ok(
      lines.some((l) => l.fields.oracleDid === first.did && l.message.includes(first.did)),
      'the DID is logged',
    );

    const second = await loadOracleIdentity({ DATA_DIR: dataDir, ORACLE_NAME: 'Guru' });
    t.equal(second.keySource, 'file');
    t.equal(second.did, first.did);
    t.equal(second.name, 'Guru');
    t.equal(readFileSync(path, 'utf8').trim(), formatKey(first.signer));
  },
);

t.test('ORACLE_PRIVATE_KEY and ORACLE_DID', async (t) => {
  const key = await generateKey();
  const fromEnv = await loadOracleIdentity({ ORACLE_PRIVATE_KEY: formatKey(key), DATA_DIR: t.testdir() });
  t.same([fromEnv.did, fromEnv.keyDid, fromEnv.keySource], [key.did(), key.did(), 'env']);

  const ixo = await loadOracleIdentity({
    ORACLE_PRIVATE_KEY: formatKey(key),
    ORACLE_DID: 'did:ixo:entity:abc',
    DATA_DIR: t.testdir(),
  });
  t.equal(ixo.did, 'did:ixo:entity:abc');
  t.equal(ixo.keyDid, key.did());
  t.equal(ixo.signer.did(), 'did:ixo:entity:abc', 'the oracle signs as its DID');

  // The authenticator built from it requires that audience.
  const auth = createOracleAuthenticator(ixo, { maxTtlSeconds: 900 });
  const user = await generateKey();
  const identity = await auth.authenticate({
    'x-auth-type': 'ucan',
    authorization: `Bearer ${await mintInvocation({ issuer: user, audience: ixo.did })}`,
  });
  t.equal(identity.did, user.did());
});

t.test('configuration: defaults and clear errors', async (t) => {
  // The oracle's variables alone, as src/app/config.ts validates them (other faces' variables are not this test's).
  const schema = v.object(oracleEnv);
  const load = (env: Record<string, string>) => v.parse(schema, env);
  const problems = (env: Record<string, string>) => {
    const result = v.safeParse(schema, env);
    return result.success ? [] : result.issues.map((issue) => `${String(issue.path?.[0]?.key)}: ${issue.message}`);
  };
  const defaults = load({});
  t.equal(defaults.UCAN_AUTH_MAX_TTL_SECONDS, 900);
  t.equal(defaults.ORACLE_NAME, 'oracle');
  t.equal(defaults.ORACLE_PRIVATE_KEY, undefined);
  t.equal(defaults.ORACLE_DID, undefined);
  const key = formatKey(await generateKey());
  const set = load({ ORACLE_PRIVATE_KEY: key, ORACLE_DID: 'did:ixo:entity:abc', UCAN_AUTH_MAX_TTL_SECONDS: '60' });
  t.same([set.ORACLE_PRIVATE_KEY, set.ORACLE_DID, set.UCAN_AUTH_MAX_TTL_SECONDS], [key, 'did:ixo:entity:abc', 60]);

  t.match(problems({ ORACLE_PRIVATE_KEY: 'not-a-key' }), [/^ORACLE_PRIVATE_KEY: .*Ed25519 private key/]);
  t.match(problems({ ORACLE_DID: 'oracle' }), [/^ORACLE_DID: must be a DID/]);
  t.match(problems({ UCAN_AUTH_MAX_TTL_SECONDS: '0' }), [/^UCAN_AUTH_MAX_TTL_SECONDS: must be at least 1/]);
  t.match(problems({ UCAN_AUTH_MAX_TTL_SECONDS: 'soon' }), [/^UCAN_AUTH_MAX_TTL_SECONDS: must be a whole number/]);
});

t.test(
  'mint-ucan prints a delegation and an invocation the oracle accepts, and keeps the user key in --key-file',
  async (t) => {
    const oracle = await generateKey();
    const keyFile = join(t.testdir(), 'user.key');
    const mint = async () =>
      JSON.parse(
        (
          await run(process.execPath, [
            MINT,
            '--oracle-did',
            oracle.did(),
            '--ttl',
            '120',
            '--key-file',
            keyFile,
            '--json',
          ])
        ).stdout,
      );
    const first = await mint();
    t.equal(statSync(keyFile).mode & 0o777, 0o600);
    const second = await mint();
    t.equal(second.userDid, first.userDid, 'the key file is reused');
    t.equal(first.oracleDid, oracle.did());

    const auth = createOracleAuthenticator(
      { did: oracle.did(), keyDid: oracle.did(), name: 'o', signer: oracle, keySource: 'env' },
      { maxTtlSeconds: 900 },
    );
    const viaInvocation = await auth.authenticate({
      'x-auth-type': 'ucan',
      authorization: `Bearer ${first.invocation}`,
    });
    t.same([viaInvocation.did, viaInvocation.via], [first.userDid, 'invocation']);
    t.ok(viaInvocation.expiration! <= Math.floor(Date.now() / 1000) + 120);
    const viaDelegation = await auth.authenticate({ 'x-ucan-delegation': first.delegation });
    t.same([viaDelegation.did, viaDelegation.via], [first.userDid, 'delegation']);

    const text = (await run(process.execPath, [MINT, '--oracle-did', oracle.did()])).stdout;
    t.match(text, /^user DID: did:key:/);
    t.match(text, /X-Auth-Type: ucan/);

    await t.rejects(run(process.execPath, [MINT]), { code: 1, stderr: /--oracle-did is required/ });
    await t.rejects(run(process.execPath, [MINT, '--oracle-did', oracle.did(), '--ttl', 'soon']), {
      code: 1,
      stderr: /--ttl must be a positive whole number/,
    });
  },
);
