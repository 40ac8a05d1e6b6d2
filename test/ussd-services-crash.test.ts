// kill -9 of a server while gateways walk a data-defined service (the shop fixture: two languages, a list of three
// pages in Swahili), then a restart on the same DATA_DIR with a new version of the service in the directory. Every
// acknowledged step's state survives: each gateway's unanswered request (or its last answered one) gets the
// screen that step answers, and the rest of the walk answers as before the kill: the same page, the same
// language, the version the session started on (its quantity limit), while a new dial gets the new version.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startChildServer } from './helpers/child-server.js';
import { GatewaySession } from './helpers/ussd-gateway.js';
import { SHOP_CODE, servicesDir, shopVersion } from './helpers/ussd-services.js';

t.setTimeout(180_000);

/**
 * One walk of the shop: choose Swahili, page through the products (More, More, Back), take the last product, cancel,
 * choose English again (so every walk starts in English) and exit.
 */
const WALK = [undefined, '2', '2', '1', '98', '98', '0', '12', '3', '2', '2', '1', '*'] as const;
const CLIENTS = 8;

const dir = servicesDir(t);
const dataDir = mkdtempSync(join(tmpdir(), 'sar-services-crash-'));
t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { USSD_SERVICES_DIR: dir, ACTOR_THREADS: '2' };

/** A gateway that walks again and again, each walk a new session; `pending` is the request not answered yet. */
class Walker {
  walks = 0;
  step = 0;
  session: GatewaySession;
  pending: string | undefined;

  constructor(
    readonly url: string,
    readonly phone: string,
  ) {
    this.session = this.#fresh();
  }

  #fresh(): GatewaySession {
    return new GatewaySession(this.url, `${this.phone}-${this.walks}`, this.phone, SHOP_CODE);
  }

  /** Sends the next input of the walk; the session's text includes it from now on, answered or not. */
  async next(): Promise<string> {
    const input = WALK[this.step];
    if (input !== undefined) this.session.inputs.push(input);
    this.pending = this.session.text;
    const screen = await this.session.resend();
    this.pending = undefined;
    this.step++;
    if (this.step === WALK.length) {
      this.walks++;
      this.step = 0;
      this.session = this.#fresh();
    }
    return screen;
  }
}

t.test('kill -9 mid-walk: every acknowledged step of a paged, two-language service survives', async (t) => {
  const first = await startChildServer(t, env, dataDir);
  // The screens of one walk, step by step, for comparison.
  const reference = new Walker(first.url, '+254722000000');
  const expected: string[] = [];
  for (let i = 0; i < WALK.length; i++) expected.push(await reference.next());
  t.match(expected[5], /^CON 12\. Unga wa ngano 2kg 230\n0\. Rudi\n\*\. Toka$/, 'page 3, in Swahili');
  t.equal(expected[7], 'CON Ngapi? (1-20)\n0. Rudi');

  const walkers = Array.from({ length: CLIENTS }, (_, i) => new Walker(first.url, `+25472200000${i + 1}`));
  let acknowledged = 0;
  let stopping = false;
  const running = walkers.map(async (walker) => {
    while (!stopping) {
      const step = walker.step;
      let screen: string;
      try {
        screen = await walker.next();
      } catch {
        return; // the kill: this request stays unanswered
      }
      if (screen !== expected[step]) throw new Error(`step ${step}: ${JSON.stringify(screen)}`);
      acknowledged++;
    }
  });
  // Well into the walks (most sessions mid-walk), kill -9.
  while (acknowledged < CLIENTS * WALK.length * 1.5) await new Promise((resolve) => setTimeout(resolve, 20));
  first.child.kill('SIGKILL');
  stopping = true;
  await Promise.all(running);
  t.equal(await first.exited, null, 'killed');
  t.ok(acknowledged > 0, `${acknowledged} steps acknowledged before the kill`);

  // A new version in the directory: running sessions must not see it, new dials must.
  writeFileSync(join(dir, 'shop.yaml'), shopVersion('1.1.0', 50));
  const second = await startChildServer(t, env, dataDir);
  let unanswered = 0;
  for (const walker of walkers) {
    const pending = walker.pending !== undefined;
    if (pending) unanswered++;
    // The gateway's retry: the unanswered request, or else the last answered one again.
    const step = pending ? walker.step : walker.step - 1;
    if (step < 0) continue; // between two walks: nothing of the next one was sent
    const session = new GatewaySession(second.url, walker.session.sessionId, walker.phone, SHOP_CODE);
    session.inputs.push(...walker.session.inputs);
    t.equal(await session.resend(), expected[step], `${walker.phone}: step ${step} answers as before`);
    // The rest of the walk: the same pages, language and version as the session had.
    for (let rest = step + 1; rest < WALK.length; rest++)
      t.equal(await session.send(WALK[rest]), expected[rest], `${walker.phone}: step ${rest} after the restart`);
  }
  // How many were in flight depends on the moment of the kill; both kinds are checked above.
  t.comment(`${unanswered} of ${CLIENTS} gateways had a request in flight at the kill`);

  const fresh = new GatewaySession(second.url, 'after-restart', '+254722000099', SHOP_CODE);
  t.match(await fresh.send(), /^CON Welcome to Mama Mboga's shop \(v1\.1\.0\)\n/, 'a new dial: the new version');
  await fresh.send('1');
  t.equal(await fresh.send('12'), 'CON How many? (1-50)\n0. Back');
  second.child.kill('SIGTERM');
  t.equal(await second.exited, 0);
});
