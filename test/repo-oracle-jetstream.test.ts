// Every oracle record family's contract against JetStream KV on a real 3-server NATS cluster (one cluster for the
// file, a fresh deployment prefix per test), through openJetStreamOracleRepositories, and what only a cluster shows:
// nodes on different servers racing on one user's credits, one user's session list, one session's turn, and a
// revocation made on one node refused at once on the others.
import t from 'tap';
import { openJetStreamOracleRepositories } from '../dist/src/cluster/records/oracle/index.js';
import { openJetStreamDelegations } from '../dist/src/cluster/records/oracle/delegations.js';
import { JetStreamRevocationRepository } from '../dist/src/cluster/records/oracle/revocations.js';
import { openJetStreamCredits } from '../dist/src/cluster/records/oracle/credits.js';
import { openJetStreamPreferences } from '../dist/src/cluster/records/oracle/preferences.js';
import type { CreditAccount } from '../dist/src/oracle/plugins/credits/repository.js';
import { JetStreamSessionRepository } from '../dist/src/cluster/records/oracle/sessions.js';
import { JetStreamTranscriptRepository } from '../dist/src/cluster/records/oracle/transcripts.js';
import { openJetStreamSessionStores } from '../dist/src/cluster/records/oracle/turn-commit.js';
import { creditLedger } from '../dist/src/oracle/plugins/credits/ledger.js';
import type { SessionRecord } from '../dist/src/oracle/sessions/records.js';
import { SessionLimitError } from '../dist/src/oracle/sessions/repository.js';
import type { ClusterConnection } from '../dist/src/cluster/connection.js';
import { KvRecordStore } from '../dist/src/cluster/record-store.js';
import { sessionRepositoryContract } from './contracts/chat-sessions.js';
import { transcriptRepositoryContract } from './contracts/transcripts.js';
import { turnCommitContract } from './contracts/turn-commit.js';
import { delegationRepositoryContract } from './contracts/delegations.js';
import { revocationRepositoryContract } from './contracts/revocations.js';
import { preferencesRepositoryContract } from './contracts/preferences.js';
import { creditRepositoryContract } from './contracts/credits.js';
import { callRepositoryContract, pendingCall } from './contracts/calls.js';
import { openJetStreamCalls } from '../dist/src/cluster/records/oracle/calls.js';
import { startTestNatsCluster } from './helpers/nats-cluster.js';
import { connectTo, freshDeployment } from './helpers/nats-repositories.js';

const nats = await startTestNatsCluster(t);
const everywhere = await connectTo(t, nats);
/** One connection per NATS server: three nodes, each talking to its own server. */
const perServer = await Promise.all(nats.servers.map((server, i) => connectTo(t, nats, [server.url], `node-${i}`)));

/** A new deployment's connection (its own buckets): every contract test starts from empty stores. */
const fresh = () => freshDeployment(everywhere)[0];

/**
 * One deployment opened by three nodes through openJetStreamOracleRepositories, shared by the cross-node tests (each
 * uses its own users and ids). The first node creates the buckets: nats-server 2.9 may leave concurrent creates unanswered.
 */
const [first, ...others]: ClusterConnection[] = freshDeployment(...perServer);
const firstNode = await openJetStreamOracleRepositories(first);
const nodes = [
  firstNode,
  ...(await Promise.all(others.map((connection) => openJetStreamOracleRepositories(connection)))),
];

// Each contract opens only its own family's buckets (opening all six per test would cost minutes).
// The tests share nothing but the cluster (each its own deployment, or its own users and ids) and mostly wait on
// JetStream (bucket creation, quorum writes): three run at a time.
t.jobs = 3;
t.test('chat sessions', (t) => (sessionRepositoryContract(t, () => JetStreamSessionRepository.open(fresh())), t.end()));
t.test(
  'transcripts',
  (t) => (transcriptRepositoryContract(t, () => JetStreamTranscriptRepository.open(fresh())), t.end()),
);
t.test('turn commit', (t) => (turnCommitContract(t, () => openJetStreamSessionStores(fresh())), t.end()));
t.test('delegations', (t) => (delegationRepositoryContract(t, () => openJetStreamDelegations(fresh())), t.end()));
t.test(
  'revocations',
  (t) => (
    revocationRepositoryContract(t, async (t) => {
      const revocations = await JetStreamRevocationRepository.open(fresh());
      t.teardown(() => revocations.close());
      return revocations;
    }),
    t.end()
  ),
);
t.test('preferences', (t) => (preferencesRepositoryContract(t, () => openJetStreamPreferences(fresh())), t.end()));
t.test('credits', (t) => (creditRepositoryContract(t, () => openJetStreamCredits(fresh())), t.end()));
t.test('calls', (t) => (callRepositoryContract(t, () => openJetStreamCalls(fresh())), t.end()));

t.test('a call synced through one node is read and listed on the others; their racing updates land once', async (t) => {
  const call = pendingCall('$cross:example.org@!room:example.org', 'did:key:zCaller', 's-cross', 1);
  const r1 = await nodes[0].calls.create(call);
  for (const node of nodes.slice(1)) {
    t.same((await node.calls.get(call.callId))?.value, call);
    t.same(await node.calls.listSession('did:key:zCaller', 's-cross', 10), [call]);
  }
  const outcomes = await Promise.allSettled(
    nodes.map((node, i) => node.calls.update({ ...call, agentVoice: `voice-${i}` }, r1)),
  );
  t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
});

t.test('30 debits through three nodes against a balance of 12 pay exactly 12', async (t) => {
  const ledgers = nodes.map((node) => creditLedger(node.credits, { initial: 12, perMessage: 1 }));
  const outcomes = await Promise.allSettled(
    Array.from({ length: 30 }, (_, i) => ledgers[i % 3].charge('did:key:zPayer')),
  );
  const paid = outcomes.filter((o): o is PromiseFulfilledResult<CreditAccount> => o.status === 'fulfilled');
  t.equal(paid.length, 12);
  t.same(
    paid.map((o) => o.value.balance).sort((a, b) => a - b),
    [...Array(12).keys()],
    'each paid debit saw its own balance',
  );
  t.equal((await ledgers[1].account('did:key:zPayer')).balance, 0);
});

const session = (sessionId: string, userDid: string, at: number): SessionRecord => ({
  sessionId,
  userDid,
  oracleDid: 'did:key:zOracle',
  oracleName: 'Oracle',
  title: sessionId,
  createdAt: at,
  lastUpdatedAt: at,
});

t.test(
  'three nodes creating sessions for one user at once: the total and the list are exact on every node',
  async (t) => {
    const before = await nodes[0].sessions.listVersion('did:key:zU');
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => nodes[i % 3].sessions.create(session(`s${i}`, 'did:key:zU', 1000 + i))),
    );
    for (const node of nodes) {
      const page = await node.sessions.listByUser('did:key:zU', { offset: 0, limit: 5 });
      t.equal(page.total, 30);
      t.same(
        page.sessions.map((s) => s.sessionId),
        ['s29', 's28', 's27', 's26', 's25'],
        'newest first',
      );
    }
    t.not(await nodes[2].sessions.listVersion('did:key:zU'), before, 'the version moved, read on another node');
  },
);

t.test('three nodes creating sessions for one capped user at once: exactly the cap lands', async (t) => {
  const CAP = 7;
  const outcomes = await Promise.allSettled(
    Array.from({ length: 21 }, (_, i) =>
      nodes[i % 3].sessions.create(session(`cap${i}`, 'did:key:zCap', 1000 + i), CAP),
    ),
  );
  const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
  t.equal(outcomes.length - refused.length, CAP);
  t.ok(
    refused.every((o) => o.reason instanceof SessionLimitError),
    'the others were refused for the cap',
  );
  for (const node of nodes)
    t.equal((await node.sessions.listByUser('did:key:zCap', { offset: 0, limit: 50 })).total, CAP);
});

t.test(
  'a listVersion read on another node after an acknowledged write is a new one, so a cached page is never stale',
  async (t) => {
    const created = await nodes[0].sessions.create(session('s', 'did:key:zV', 1));
    const versions = [await nodes[1].sessions.listVersion('did:key:zV')];
    const moved = await nodes[0].sessions.update({ ...created.value, title: 'Moved' }, created.revision);
    versions.push(await nodes[2].sessions.listVersion('did:key:zV'));
    t.equal((await nodes[2].sessions.listByUser('did:key:zV', { offset: 0, limit: 1 })).sessions[0].title, 'Moved');
    await nodes[1].sessions.remove('s', moved.revision);
    versions.push(await nodes[0].sessions.listVersion('did:key:zV'));
    t.equal(new Set(versions).size, 3);
    t.same(await nodes[2].sessions.listByUser('did:key:zV', { offset: 0, limit: 5 }), { sessions: [], total: 0 });
  },
);

t.test(
  'one session, a turn committed through three nodes at once: one lands whole, the others write nothing',
  async (t) => {
    for (let round = 0; round < 10; round++) {
      const id = `turn-${round}`;
      const created = await nodes[0].sessions.create(session(id, 'did:key:zT', 1));
      const outcomes = await Promise.allSettled(
        nodes.map((node, i) =>
          node.commitTurn({ ...created.value, title: `node ${i}` }, created.revision, 0, [
            { id: `q${i}`, type: 'human', content: `q${i}`, createdAt: 1 },
            { id: `a${i}`, type: 'human', content: `a${i}`, createdAt: 1 },
          ]),
        ),
      );
      const won = outcomes.flatMap((outcome, i) => (outcome.status === 'fulfilled' ? [i] : []));
      t.equal(won.length, 1, `round ${round}: one turn`);
      const page = await nodes[(round + 1) % 3].transcripts.read(id, { from: 0, limit: 10 });
      t.same(
        page.entries.map((e) => e.content),
        [`q${won[0]}`, `a${won[0]}`],
        'its entries only',
      );
      t.equal((await nodes[2].sessions.get(id))?.value.title, `node ${won[0]}`);
    }
  },
);

t.test("a node that died between a turn's entries and its record: the next turn appends after them", async (t) => {
  const [node] = nodes;
  const created = await node.sessions.create(session('crash', 'did:key:zC', 1));
  // The dead node's first step: the entries, without the record.
  await node.transcripts.append('crash', 0, [{ id: 'q', type: 'human', content: 'q', createdAt: 1 }]);
  const length = await node.transcripts.length('crash');
  t.equal(length, 1, 'the entries count in the length the next owner reads');
  await node.commitTurn({ ...created.value, title: 'after' }, created.revision, length, [
    { id: 'q2', type: 'human', content: 'q2', createdAt: 2 },
  ]);
  t.same(
    (await node.transcripts.read('crash', { from: 0, limit: 5 })).entries.map((e) => e.content),
    ['q', 'q2'],
  );
});

t.test(
  'entries taken back (a turn refused after its append) leave the transcript as before, and their numbers free',
  async (t) => {
    const transcripts = await JetStreamTranscriptRepository.open(fresh());
    const entry = (content: string) => ({ id: content, type: 'human' as const, content, createdAt: 1 });
    await transcripts.append('tb', 0, [entry('kept')]);
    const appended = await transcripts.write(await transcripts.check('tb', 1, [entry('q'), entry('a')]));
    t.equal(await transcripts.length('tb'), 3);
    await transcripts.takeBack(appended);
    t.equal(await transcripts.length('tb'), 1, 'the length after deletions from the top down');
    t.same(
      (await transcripts.readNewest('tb', { limit: 5 })).entries.map((e) => e.content),
      ['kept'],
    );
    await transcripts.append('tb', 1, [entry('q2'), entry('a2')]);
    t.same(
      (await transcripts.read('tb', { from: 0, limit: 5 })).entries.map((e) => e.content),
      ['kept', 'q2', 'a2'],
      'the numbers are written again',
    );
  },
);

t.test(
  "a node that died between a session's record and its index entry: unlisted until its next write, removable",
  async (t) => {
    const connection = fresh();
    const sessions = await JetStreamSessionRepository.open(connection);
    const store = await KvRecordStore.open<SessionRecord>(connection, { name: 'oracle_sessions' });
    // The dead node's first step: the record, without its index entry.
    const revision = await store.create(['s', 'orphan'], session('orphan', 'did:key:zO', 1));
    t.same(
      await sessions.listByUser('did:key:zO', { offset: 0, limit: 5 }),
      { sessions: [], total: 0 },
      'not listed, not counted',
    );
    const moved = await sessions.update({ ...session('orphan', 'did:key:zO', 2), title: 'turn' }, revision);
    t.same(
      (await sessions.listByUser('did:key:zO', { offset: 0, limit: 5 })).sessions.map((s) => s.title),
      ['turn'],
      'its next write lists it',
    );
    await sessions.remove('orphan', moved.revision);
    t.same(await sessions.listByUser('did:key:zO', { offset: 0, limit: 5 }), { sessions: [], total: 0 });
    t.equal(await sessions.get('orphan'), undefined);
  },
);

t.test(
  'a revocation acknowledged on one node is refused at once on the others, and heard by their onRevoked',
  async (t) => {
    const heard = nodes.map(() => [] as string[]);
    for (const [i, node] of nodes.entries()) node.revocations.onRevoked((cid) => heard[i].push(cid));
    for (let round = 0; round < 10; round++) {
      const cid = `bafy-${round}`;
      t.equal(await nodes[(round + 1) % 3].revocations.isRevoked(cid), false);
      await nodes[round % 3].revocations.revoke(cid);
      const seen = await Promise.all(nodes.map((node) => node.revocations.isRevoked(cid)));
      t.same(seen, [true, true, true], `round ${round}`);
      // A check brings each node's watch up to the write, and the watch tells the listeners.
      t.same(
        heard.map((cids) => cids.includes(cid)),
        [true, true, true],
        `round ${round}: heard on every node`,
      );
    }
  },
);
