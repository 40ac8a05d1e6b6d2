// The `query` action through HTTP: USSD dials in Africa's Talking's form post, against the embedded local query
// node the gateway tests use (started here, reached through a TCP relay the test can freeze or cut). A balance
// is read in process through the gateway's own routes and shown; a typed value stays inside its path segment; an
// unknown account takes the not_found branch; a retry replays the committed step without asking the chain again;
// a hung node and a node down take the unreachable branch within the deadline, never a 5xx. The load-time rules
// refuse a query whose path reads a value the flow never has, a PIN, or a bad path.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { Test } from 'tap';
import { LocalQueryNode } from '../dist/src/gateway/local-node/server.js';
import { openStore } from '../dist/src/store/env.js';
import { checkServiceText } from '../dist/src/ussd/services/check.js';
import { scrape } from './helpers/metrics.js';
import { startTestServer } from './helpers/server.js';
import { serviceDir } from './helpers/ussd-backend.js';
import { englishServiceHead } from './helpers/ussd-services.js';

const AGENT = 'ixo1agent2b4d6f8h0j2l4n6p8r0t2v4x6z8b0d2f4h6';
const DOWN = 'END The chain cannot be reached, try later.';
const UNKNOWN = 'END No such account.';

const wallet = (path = '/cosmos/auth/v1beta1/accounts/{{address}}') => `
${englishServiceHead('wallet', '*600#', 'menu')}states:
  menu:
    type: menu
    text: Wallet
    options:
      - { key: '1', text: Balance, next: askAddress, set: { then: balance } }
      - { key: '2', text: Account, next: askAddress, set: { then: account } }
      - { key: '3', text: Old path, next: askAddress, set: { then: old } }
  askAddress:
    type: input
    prompt: 'Address:'
    validate: { kind: text, minLength: 3, maxLength: 90 }
    save: address
    next: route
    invalid: { next: askAddress, notice: Try again. }
  route:
    type: menu
    text: 'Look up {{address}}:'
    options:
      - { key: '1', text: Balance, next: balance, when: { value: then, equals: balance } }
      - { key: '1', text: Account, next: account, when: { value: then, equals: account } }
      - { key: '1', text: Old path, next: old, when: { value: then, equals: old } }
  balance:
    type: action
    action: query
    query:
      path: /cosmos/bank/v1beta1/balances/{{address}}/by_denom?denom=uixo
      save: { amount: balance.amount, denom: balance.denom }
      timeoutMs: 300
    outcomes:
      ok: { next: shown }
      not_found: { next: unknown }
      unreachable: { next: down }
  account:
    type: action
    action: query
    query: { path: '${path}', save: { number: account.account_number } }
    outcomes:
      ok: { next: shownAccount }
      not_found: { next: unknown }
      unreachable: { next: down }
  old:
    type: action
    action: query
    query: { path: '/cosmos/bank/v1beta1/balance/{{address}}' }
    outcomes:
      ok: { next: shown }
      not_found: { next: unknown }
      unreachable: { next: down }
  shown:
    type: menu
    text: 'Balance: {{amount}} {{denom}}'
    back: menu
  shownAccount:
    type: end
    text: 'Account {{number}}'
  unknown:
    type: end
    text: No such account.
  down:
    type: end
    text: The chain cannot be reached, try later.
`;

/** A TCP relay to the node: `freeze` stops passing bytes (a hung node), `down` cuts every connection and the port. */
async function startRelay(t: Test, target: string) {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<Socket>();
  let passing = true;
  const server = createServer((client) => {
    const node = connect(port, host);
    for (const socket of [client, node]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        node.destroy();
      });
    }
    client.on('data', (chunk) => passing && node.write(chunk));
    node.on('data', (chunk) => passing && client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const down = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  };
  t.teardown(() => (server.listening ? down() : undefined));
  return {
    target: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    freeze: () => void (passing = false),
    down,
  };
}

async function startNode(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'sar-query-node-'));
  const store = openStore(dir);
  const node = await LocalQueryNode.start({ db: store.db<Uint8Array>('gateway-local-node') });
  t.teardown(async () => {
    await node.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return node;
}

/** One Africa's Talking request (a form post); the answer's status, text and time taken. */
async function dial(url: string, sessionId: string, text: string) {
  const started = performance.now();
  const res = await fetch(`${url}/api/ussd`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ sessionId, serviceCode: '*600#', phoneNumber: '+254700000600', text }).toString(),
  });
  return { status: res.status, text: await res.text(), ms: performance.now() - started };
}

/** Upstream calls of one bank or auth method the gateway made (its own metric, on the main thread: no delay). */
async function upstreamCalls(url: string, method: string): Promise<number> {
  return (await scrape(url)).count('gateway_upstream_duration_seconds', { method });
}

/** The hosts report their counters once a second: waits for the expected counts (or the last seen, to fail on). */
async function queryCounts(url: string, expected: Record<string, number>): Promise<Record<string, number>> {
  let counted: Record<string, number> = {};
  for (const started = Date.now(); Date.now() - started < 5_000; ) {
    const metrics = await scrape(url);
    counted = Object.fromEntries(
      Object.keys(expected).map((key) => {
        const [outcome, reason] = key.split('/');
        return [key, metrics.value('ussd_query_calls_total', { service: 'wallet', outcome, reason })];
      }),
    );
    if (JSON.stringify(counted) === JSON.stringify(expected)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return counted;
}

t.test('chain queries from a menu, through HTTP, against the local query node', async (t) => {
  const node = await startNode(t);
  const relay = await startRelay(t, node.target);
  const server = await startTestServer(t, {
    env: {
      GATEWAY_GRPC_TARGET: relay.target,
      GATEWAY_DESCRIPTORS: 'bundled',
      USSD_SERVICES_DIR: serviceDir(t, wallet()),
      // The step's calls get half of it: 1.5 s.
      USSD_STEP_TIMEOUT_MS: '3000',
    },
  });
  const session = (name: string) => `query-${name}-${process.pid}`;

  t.test('a balance read through the gateway is shown; a retry replays it without asking again', async (t) => {
    const id = session('balance');
    t.equal((await dial(server.url, id, '')).text, 'CON Wallet\n1. Balance\n2. Account\n3. Old path');
    await dial(server.url, id, '1');
    t.equal((await dial(server.url, id, `1*${AGENT}`)).text, `CON Look up ${AGENT}:\n1. Balance`);
    const before = await upstreamCalls(server.url, 'Balance');
    const shown = await dial(server.url, id, `1*${AGENT}*1`);
    t.equal(shown.status, 200);
    t.equal(shown.text, 'CON Balance: 1250000000 uixo\n0. Back', "the answer's fields saved and shown");
    t.equal(await upstreamCalls(server.url, 'Balance'), before + 1, 'one call to the node');
    const again = await dial(server.url, id, `1*${AGENT}*1`);
    t.equal(again.text, shown.text, 'a gateway retry gets the same screen');
    t.equal(await upstreamCalls(server.url, 'Balance'), before + 1, 'the committed step is not asked again');
  });

  t.test('a typed value stays inside its path segment: no other route, no other parameter', async (t) => {
    const id = session('encoded');
    await dial(server.url, id, '');
    await dial(server.url, id, '1');
    const typed = `${AGENT}/x?denom=xusd`;
    await dial(server.url, id, `1*${typed}`);
    // The node is asked the balance of the address "ixo1.../x?denom=xusd" (none) in uixo, not of xusd.
    t.equal((await dial(server.url, id, `1*${typed}*1`)).text, 'CON Balance: 0 uixo\n0. Back');
  });

  t.test('an unknown account takes the not_found branch', async (t) => {
    const id = session('unknown');
    await dial(server.url, id, '');
    await dial(server.url, id, '2');
    await dial(server.url, id, '2*ixo1nobody');
    const answer = await dial(server.url, id, '2*ixo1nobody*1');
    t.equal(answer.status, 200);
    t.equal(answer.text, UNKNOWN, 'the node answered NOT_FOUND');
    // A path no route of the gateway has (balance, not balances) is not found too, counted apart (no_route).
    const old = session('old');
    await dial(server.url, old, '');
    await dial(server.url, old, '3');
    await dial(server.url, old, `3*${AGENT}`);
    t.equal((await dial(server.url, old, `3*${AGENT}*1`)).text, UNKNOWN, 'no route: not_found');
  });

  t.test('a hung node, then a node down: the unreachable branch within the deadline, never a 5xx', async (t) => {
    const ready = async (name: string, option: string) => {
      const id = session(name);
      await dial(server.url, id, '');
      await dial(server.url, id, option);
      await dial(server.url, id, `${option}*${AGENT}`);
      return (text: string) => dial(server.url, id, `${option}*${AGENT}*${text}`);
    };
    const hungBalance = await ready('hung-balance', '1');
    const hungAccount = await ready('hung-account', '2');
    const downBalance = await ready('down-balance', '1');
    relay.freeze();
    const own = await hungBalance('1');
    t.equal(own.status, 200);
    t.equal(own.text, DOWN, "a hung node: the query's own timeout (300 ms)");
    t.ok(own.ms >= 250 && own.ms < 1_200, `answered in ${Math.round(own.ms)} ms`);
    const budget = await hungAccount('1');
    t.equal(budget.text, DOWN, "the step's time (1.5 s of USSD_STEP_TIMEOUT_MS 3 s) bounds the default 2 s");
    t.ok(budget.ms >= 1_400 && budget.ms < 2_500, `answered in ${Math.round(budget.ms)} ms`);
    await relay.down();
    const down = await downBalance('1');
    t.equal(down.status, 200);
    t.equal(down.text, DOWN, 'a node down');
    t.ok(down.ms < 1_000, `answered in ${Math.round(down.ms)} ms`);
    t.same(
      await queryCounts(server.url, {
        'ok/ok': 2,
        'not_found/not_found': 1,
        'not_found/no_route': 1,
        'unreachable/deadline_exceeded': 2,
        'unreachable/unavailable': 1,
      }),
      {
        'ok/ok': 2,
        'not_found/not_found': 1,
        'not_found/no_route': 1,
        'unreachable/deadline_exceeded': 2,
        'unreachable/unavailable': 1,
      },
      'counted by service, outcome and reason',
    );
  });
});

t.test('load-time rules of a query', async (t) => {
  const problems = (yaml: string) => checkServiceText(yaml, 'wallet.yaml').problems.map((p) => p.message);
  const refused = (yaml: string, problem: RegExp) => {
    const found = problems(yaml);
    t.equal(found.length, 1, `one problem: ${found.join('; ')}`);
    t.match(found[0], problem);
  };
  t.same(problems(wallet()), [], 'the test service passes');
  refused(wallet('/cosmos/auth/v1beta1/accounts/{{account.address}}'), /\{\{account\.address\}\} is no value/);
  refused(wallet('/cosmos/auth/v1beta1/accounts/{{nobody}}'), /\{\{nobody\}\} is no value of this service/);
  refused(wallet('/cosmos/auth/v1beta1/../accounts/{{address}}'), /a path segment \. or \.\./);
  refused(wallet('/cosmos/auth//accounts/{{address}}'), /an empty path segment/);
  refused(wallet('/cosmos/bank/v1beta1/balances/x?{{address}}=1'), /in the name of the query parameter/);
  refused(wallet('/cosmos/auth/v1beta1/accounts/{{bad!name}}'), /a \{ or \} that is not a \{\{value\}\}/);
  const pinState =
    '  askPin:\n    type: input\n    prompt: PIN\n    validate: { kind: pin }\n    save: pin\n    next: menu\n' +
    '    invalid: { next: askPin }\n';
  const withPin = wallet('/x/{{pin}}')
    .replace(
      "      - { key: '2', text: Account",
      "      - { key: '3', text: PIN, next: askPin }\n      - { key: '2', text: Account",
    )
    .replace('  askAddress:', `${pinState}  askAddress:`);
  refused(withPin, /\{\{pin\}\} is a PIN: it is never sent/);
  const accountQuery =
    "    query: { path: '/cosmos/auth/v1beta1/accounts/{{address}}', save: { number: account.account_number } }\n";
  refused(
    wallet().replace(accountQuery, `${accountQuery}    request: { url: 'http://x.example' }\n`),
    /query takes no request/,
  );
  refused(wallet().replace(accountQuery, ''), /query needs a query/);
  const loggingOut = wallet().replace('    action: query\n    query: {', '    action: logOut\n    query: {');
  t.match(problems(loggingOut).join('\n'), /logOut takes no query \(only the query action does\)/);
});
