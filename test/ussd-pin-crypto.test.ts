import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PinCipher } from '../dist/src/ussd/actor/pin-cipher.js';
import { PIN_KEY_FILE, PIN_KEY_SALT, pinKeyProblem, resolvePinKey, scryptKey } from '../dist/src/ussd/pin-key.js';

function recordingLog() {
  const warnings: string[] = [];
  const infos: string[] = [];
  return {
    warnings,
    infos,
    log: {
      warn: (_obj: unknown, msg: string) => void warnings.push(msg),
      info: (_obj: unknown, msg: string) => void infos.push(msg),
    },
  };
}

t.test('cipher: the same PIN twice gives different ciphertexts that both match', async (t) => {
  const cipher = new PinCipher(randomBytes(32));
  const a = cipher.encrypt('48213');
  const b = cipher.encrypt('48213');
  t.not(a, b);
  t.notMatch(a, /48213/);
  t.ok(cipher.matches(a, '48213'));
  t.ok(cipher.matches(b, '48213'));
  t.notOk(cipher.matches(a, '48214'));
  t.notOk(cipher.matches(a, '4821'));
  t.notOk(cipher.matches(a, ''));
});

t.test('cipher: a wrong key never matches', async (t) => {
  const stored = new PinCipher(randomBytes(32)).encrypt('48213');
  t.notOk(new PinCipher(randomBytes(32)).matches(stored, '48213'));
});

t.test('cipher: a ciphertext bound to one context does not match in another', async (t) => {
  const cipher = new PinCipher(randomBytes(32));
  const stored = cipher.encrypt('48213', 'CAAAA0001');
  t.ok(cipher.matches(stored, '48213', 'CAAAA0001'));
  t.notOk(cipher.matches(stored, '48213', 'CAAAA0002'));
  t.notOk(cipher.matches(stored, '48213'));
});

t.test('cipher: tampered or malformed data is no match and no exception', async (t) => {
  const cipher = new PinCipher(randomBytes(32));
  const stored = cipher.encrypt('48213');
  const raw = Buffer.from(stored.slice(3), 'base64url');
  for (const index of [0, 12, raw.length - 1]) {
    const flipped = Buffer.from(raw);
    flipped[index] ^= 1;
    t.notOk(cipher.matches(`v1.${flipped.toString('base64url')}`, '48213'), `byte ${index} flipped`);
  }
  for (const bad of [
    '',
    'v1.',
    'v1.AAAA',
    `v2.${stored.slice(3)}`,
    stored.slice(0, -4),
    'not base64 !!',
    null,
    undefined,
    42,
  ]) {
    t.notOk(cipher.matches(bad as any, '48213'), `bad stored value ${String(bad)}`);
  }
  t.notOk(cipher.matches(stored, undefined as any));
});

t.test('cipher: refuses a key that is not 32 bytes', async (t) => {
  t.throws(() => new PinCipher(randomBytes(16)), /32 bytes/);
});

t.test('key: 64 hex characters are the key itself', async (t) => {
  const hex = randomBytes(32).toString('hex');
  const { log, warnings, infos } = recordingLog();
  const { key, kind } = await resolvePinKey(
    { PIN_ENCRYPTION_KEY: hex, NODE_ENV: 'production', DATA_DIR: t.testdir() },
    log,
    () => {
      throw new Error('must not derive a hex key');
    },
  );
  t.equal(key.toString('hex'), hex);
  t.equal(kind, 'hex');
  t.same(warnings, []);
  t.match(infos, [/64 hex characters, used as the AES-256 key/], 'the log says which kind of key');
});

t.test('key: a passphrase of 32 characters or more is stretched with the given derive function', async (t) => {
  const { log, infos } = recordingLog();
  const calls: string[][] = [];
  const derive = async (secret: string, salt: string) => {
    calls.push([secret, salt]);
    return scryptKey(secret, salt);
  };
  const passphrase = 'correct horse battery staple, twice';
  const env = { PIN_ENCRYPTION_KEY: passphrase, NODE_ENV: 'production', DATA_DIR: t.testdir() };
  const first = (await resolvePinKey(env, log, derive)).key;
  const again = (await resolvePinKey(env, log, derive)).key;
  const other = (
    await resolvePinKey({ ...env, PIN_ENCRYPTION_KEY: 'another passphrase of enough length' }, log, derive)
  ).key;
  t.equal(first.length, 32);
  t.match(infos[0], /a passphrase, stretched with scrypt/, 'the log says which kind of key');
  t.same(first, again, 'the same passphrase gives the same key on every start');
  t.notSame(first, other);
  t.same(calls[0], [passphrase, PIN_KEY_SALT]);
  t.same((await resolvePinKey(env, log)).key, first, 'the default derive is scrypt with the same parameters');
});

t.test('key: a typo is refused, never used (63 hex characters, a short passphrase)', async (t) => {
  const { log } = recordingLog();
  const env = { NODE_ENV: 'production', DATA_DIR: t.testdir() };
  for (const [value, why] of [
    ['a'.repeat(63), /has 63 hex characters: a key is exactly 64/],
    ['f'.repeat(65), /has 65 hex characters/],
    ['nothex', /a passphrase of at least 32 characters \(this one has 6\)/],
    ['correct horse battery staple', /this one has 28/],
  ] as const) {
    t.equal(pinKeyProblem(value)?.match(why)?.length, 1, `${value.slice(0, 8)}...: ${why}`);
    await t.rejects(resolvePinKey({ ...env, PIN_ENCRYPTION_KEY: value }, log), why);
  }
  t.equal(pinKeyProblem('A'.repeat(64)), undefined, 'upper-case hex is a key');
  t.equal(pinKeyProblem('x'.repeat(32)), undefined, '32 characters is a passphrase');
});

t.test('key: production without PIN_ENCRYPTION_KEY refuses to start', async (t) => {
  const dir = t.testdir();
  const { log } = recordingLog();
  await t.rejects(
    resolvePinKey({ NODE_ENV: 'production', DATA_DIR: dir }, log),
    /PIN_ENCRYPTION_KEY is required in production/,
  );
  await t.rejects(
    resolvePinKey({ PIN_ENCRYPTION_KEY: '  ', NODE_ENV: 'production', DATA_DIR: dir }, log),
    /required in production/,
  );
});

t.test('key: development creates a key file once (mode 0600), reuses it and warns', async (t) => {
  const dir = join(t.testdir(), 'nested', 'data');
  const { log, warnings } = recordingLog();
  const first = (await resolvePinKey({ NODE_ENV: 'development', DATA_DIR: dir }, log)).key;
  const path = join(dir, PIN_KEY_FILE);
  t.equal(statSync(path).mode & 0o777, 0o600);
  t.equal(readFileSync(path, 'utf8').trim(), first.toString('hex'));
  const second = (await resolvePinKey({ DATA_DIR: dir }, log)).key;
  t.same(second, first, 'reused on the next start');
  t.equal(warnings.length, 2);
  t.match(warnings[0], /created/);
  t.match(warnings[1], /PIN_ENCRYPTION_KEY is not set/);
  const cipher = new PinCipher(first);
  t.ok(new PinCipher(second).matches(cipher.encrypt('48213'), '48213'), 'PINs stay verifiable across restarts');
});

t.test('key: a corrupt key file stops start-up instead of being replaced', async (t) => {
  const dir = t.testdir({ [PIN_KEY_FILE]: 'not a key\n' });
  const { log } = recordingLog();
  await t.rejects(resolvePinKey({ DATA_DIR: dir }, log), /does not hold a 64-hex-character key/);
  t.equal(readFileSync(join(dir, PIN_KEY_FILE), 'utf8'), 'not a key\n');
  writeFileSync(join(dir, PIN_KEY_FILE), 'ab'.repeat(32));
  t.equal((await resolvePinKey({ DATA_DIR: dir }, log)).key.toString('hex'), 'ab'.repeat(32));
});
