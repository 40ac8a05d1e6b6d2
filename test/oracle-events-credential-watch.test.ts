// The credential watch's index (the end-to-end behaviour is in oracle-events-credentials.test.ts): a revoked CID
// ends exactly the sockets whose chain holds it, however many share it, and a removed socket is forgotten.
import t from 'tap';
import { CredentialWatch } from '../dist/src/oracle/events/credential-watch.js';

type Socket = { name: string; identity: { chain: string[]; expiration?: number } };

function watchOf() {
  const ended: string[] = [];
  const watch = new CredentialWatch<Socket>((socket, why) => {
    ended.push(`${socket.name}: ${why}`);
    watch.remove(socket); // as the transport's close does
  });
  return { watch, ended };
}

const socket = (name: string, chain: string[], expiration?: number): Socket => ({
  name,
  identity: { chain, expiration },
});

t.test('a revoked CID ends the sockets that hold it in their chain, one or many, and no other', async (t) => {
  const { watch, ended } = watchOf();
  const later = Math.floor(Date.now() / 1000) + 600;
  const [a, b, c, d] = [
    socket('a', ['inv-a', 'shared']),
    socket('b', ['inv-b', 'shared'], later),
    socket('c', ['shared'], later),
    socket('d', ['inv-d']),
  ];
  for (const s of [a, b, c, d]) t.equal(watch.add(s), undefined, `${s.name} watched`);
  watch.remove(c);
  watch.revoked('unknown');
  t.same(ended, []);
  watch.revoked('shared');
  t.same(ended.sort(), ['a: credential revoked', 'b: credential revoked'], 'c was removed before');
  t.same(watch.size, { cids: 1, expiries: 0 }, 'only d is left');
  watch.revoked('inv-d');
  t.same(watch.size, { cids: 0, expiries: 0 });
  // A handshake that checked revocations before 'shared' was revoked, and opens after.
  t.equal(
    watch.add(socket('late', ['inv-late', 'shared'])),
    'credential revoked',
    'a recent revocation refuses a socket opening now',
  );
  t.same(watch.size, { cids: 0, expiries: 0 });
});

t.test('a credential expired already is refused and not kept', async (t) => {
  const { watch } = watchOf();
  t.equal(watch.add(socket('late', ['x'], Math.floor(Date.now() / 1000))), 'credential expired');
  t.same(watch.size, { cids: 0, expiries: 0 });
});

t.test('a fractional expiry is swept at the next whole second', async (t) => {
  const expiration = Date.now() / 1000 + 0.3;
  // The sweep's timer is unref'd (it never holds a server up): a guard timer keeps this process alive meanwhile.
  const guard = setTimeout(() => t.fail('not swept within 3 s'), 3000);
  const why = await new Promise<string>((resolve) => {
    const watch = new CredentialWatch<Socket>((socket, why) => {
      watch.remove(socket);
      t.same(watch.size, { cids: 0, expiries: 0 }, 'forgotten');
      resolve(why);
    });
    t.equal(watch.add(socket('frac', ['y'], expiration)), undefined);
  });
  clearTimeout(guard);
  t.equal(why, 'credential expired');
  t.ok(Date.now() / 1000 >= expiration, 'not before its exp');
});
