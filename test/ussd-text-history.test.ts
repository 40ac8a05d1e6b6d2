import t from 'tap';
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import {
  extendHistory,
  latestInput,
  newInput,
  newInputAfter,
  rememberHistory,
} from '../dist/src/ussd/actor/text-history.js';
import { PinCipher } from '../dist/src/ussd/actor/pin-cipher.js';

t.test('first input after the welcome menu is the whole text', async (t) => {
  t.same(newInput('', '1'), { kind: 'input', input: '1' });
  t.same(newInput('', '*'), { kind: 'input', input: '*' });
  t.same(newInput('', '00'), { kind: 'input', input: '00' });
});

t.test('the new input is what follows the consumed history', async (t) => {
  t.same(newInput('1', '1*2'), { kind: 'input', input: '2' });
  t.same(newInput('2*2', '2*2*Amina Otieno'), { kind: 'input', input: 'Amina Otieno' });
  t.same(newInput('2*2*Amina', '2*2*Amina*00'), { kind: 'input', input: '00' });
});

t.test('a * typed after earlier inputs is an input of its own, not a separator', async (t) => {
  t.same(newInput('1', '1**'), { kind: 'input', input: '*' });
  t.same(newInput('1*2', '1*2*a*b'), { kind: 'input', input: 'a*b' });
});

t.test('an earlier * in the history does not turn later inputs into Exit', async (t) => {
  t.same(newInput('2*1*C1A2B3C4D**', '2*1*C1A2B3C4D***1'), { kind: 'input', input: '1' });
});

t.test('an empty input after a separator is an empty input', async (t) => {
  t.same(newInput('1', '1*'), { kind: 'input', input: '' });
});

t.test('the same text again is a gateway retry', async (t) => {
  t.same(newInput('', ''), { kind: 'retry' });
  t.same(newInput('1', '1'), { kind: 'retry' });
  t.same(newInput('1*2*12345', '1*2*12345'), { kind: 'retry' });
});

t.test('a text that does not extend the history is the latest input alone', async (t) => {
  t.same(newInput('1', '2'), { kind: 'input', input: '2' });
  t.same(newInput('1*2', '12345'), { kind: 'input', input: '12345' });
  // "12" starts with "1" but not with "1*": it is a new input, not a continuation
  t.same(newInput('1', '12'), { kind: 'input', input: '12' });
});

t.test('a history kept as length and keyed digest parses the same way', async (t) => {
  const cipher = new PinCipher(randomBytes(32));
  const cases: [string, string][] = [
    ['', ''],
    ['', '1'],
    ['1', '1'],
    ['1', '1*2'],
    ['1', '1**'],
    ['1', '12'],
    ['1', '2'],
    ['1*2', '1*2*a*b'],
    ['2*2*Amina*00*48213', '2*2*Amina*00*48213*48213'],
    ['2*2*Amina*00*48213', '2*2*Amina*00*48214*48213'],
  ];
  for (const [consumed, text] of cases) {
    const history = rememberHistory(consumed, cipher);
    t.same(
      newInputAfter(history, text, cipher),
      newInput(consumed, text),
      `${JSON.stringify(consumed)} then ${JSON.stringify(text)}`,
    );
  }
});

t.test('the stored history reveals no input', async (t) => {
  const cipher = new PinCipher(randomBytes(32));
  const history = rememberHistory('2*2*Amina*00*48213*48213', cipher);
  t.equal(history.length, 24);
  t.notMatch(JSON.stringify(history), /48213|Amina/);
  const otherKey = new PinCipher(randomBytes(32));
  t.not(otherKey.digest('2*2*Amina*00*48213*48213'), history.digest, 'the digest depends on the key');
});

/** The digest a release before the 'h2.' form stored: HMAC-SHA256 under the HKDF subkey, base64url. */
function legacyDigest(key: Buffer, text: string): string {
  const subkey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'ussd-text-history-digest', 32));
  return createHmac('sha256', subkey).update(text, 'utf8').digest('base64url');
}

t.test(
  'digests are versioned: the current form, and the HMAC form of sessions stored before it, are both recognised',
  async (t) => {
    const key = randomBytes(32);
    const cipher = new PinCipher(key);
    const current = cipher.digest('1*2*48213');
    t.match(current, /^h2\.[A-Za-z0-9_-]{43}$/, 'h2. and 256 bits in base64url');
    t.ok(cipher.isDigestOf(current, '1*2*48213'));
    t.notOk(cipher.isDigestOf(current, '1*2*48214'), 'another text');
    t.notOk(new PinCipher(randomBytes(32)).isDigestOf(current, '1*2*48213'), 'another key');
    t.not(cipher.digest('1*2*4821'), cipher.digest('1*2*48213'), 'a prefix has a digest of its own');

    const legacy = legacyDigest(key, '1*2*48213');
    t.ok(cipher.isDigestOf(legacy, '1*2*48213'), 'an HMAC digest stored before the upgrade');
    t.notOk(cipher.isDigestOf(legacy, '1*2*48214'));
    t.notOk(
      cipher.isDigestOf(legacyDigest(randomBytes(32), '1*2*48213'), '1*2*48213'),
      'an HMAC digest of another key',
    );
    t.notOk(cipher.isDigestOf(`h2.${legacy}`, '1*2*48213'), 'a legacy digest relabelled as current');
    t.notOk(cipher.isDigestOf('', ''), 'an empty digest');
  },
);

t.test('a history stored with the HMAC form parses as before, and is remembered in the current form', async (t) => {
  const key = randomBytes(32);
  const cipher = new PinCipher(key);
  const stored = { length: '2*2*Amina'.length, digest: legacyDigest(key, '2*2*Amina') };
  t.same(newInputAfter(stored, '2*2*Amina', cipher), { kind: 'retry' });
  t.same(newInputAfter(stored, '2*2*Amina*00', cipher), { kind: 'input', input: '00' });
  t.same(
    newInputAfter(stored, '2*2*Amino*00', cipher),
    { kind: 'input', input: '2*2*Amino*00' },
    'not the stored history',
  );
  t.match(rememberHistory('2*2*Amina*00', cipher).digest, /^h2\./);
});

t.test('latest-input gateways: each input extends the history; a repeated request number is a retry', async (t) => {
  const cipher = new PinCipher(randomBytes(32));
  const start = rememberHistory('', cipher);
  t.same(latestInput(start, '1', undefined), { kind: 'input', input: '1' });
  const one = extendHistory(start, '1', 2, cipher);
  t.equal(one.length, 1, 'the length AT would have sent: "1"');
  t.equal(one.step, 2);
  t.same(latestInput(one, '1', 2), { kind: 'retry' }, 'the same number again: a retry');
  t.same(latestInput(one, '1', 3), { kind: 'input', input: '1' }, 'the same input with the next number: an input');
  t.same(latestInput(one, '1', undefined), { kind: 'input', input: '1' }, 'no numbers: every request is an input');
  const two = extendHistory(one, '48207', 3, cipher);
  t.equal(two.length, '1*48207'.length);
  t.notMatch(JSON.stringify(two), /48207/, 'the input itself is never stored');
  const twoElsewhere = extendHistory(extendHistory(start, '2', undefined, cipher), '48207', undefined, cipher);
  t.not(two.digest, twoElsewhere.digest, 'different paths, different digests');
  t.not(extendHistory(two, '1', undefined, cipher).digest, two.digest, 'each step changes the digest');
  t.notOk('step' in extendHistory(one, '1', undefined, cipher), 'no step kept when the gateway numbers none');
});
