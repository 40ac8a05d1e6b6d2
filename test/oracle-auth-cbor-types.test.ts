// No UCAN bytes answer a 5xx (issue 45): real ucanto-minted archives, each value of each block (the variant root,
// the UCAN, its proofs, and the optional fields it leaves out) replaced by a value of every other CBOR type, sent
// to one real server as the invocation, as x-ucan-delegation alone and beside a valid invocation: the answer is 200
// or a 401 with a reason, never anything else. Every (block, value, type) is sent; fast-check draws the value.
// On failure fast-check prints the seed and the shrunk value; rerun with UCAN_TYPES_SEED=<seed>.
import t from 'tap';
import fc from 'fast-check';
import { decodeLink } from '@ucanto/core';
import type { Delegation, Link } from '@ucanto/interface';
import { INVALID_DELEGATION_MESSAGE, INVALID_UCAN_MESSAGE } from '../dist/src/oracle/auth/index.js';
import { createDelegation, createInvocation, encodeArtifact, generateKey } from '../dist/src/tools/mint-ucan.js';
import { call, sharedOracleServer } from './helpers/oracle.js';
import {
  archiveOfTree,
  CBOR_KINDS,
  positionsOf,
  treeOf,
  type CborKind,
  type Position,
  type UcanTree,
} from './helpers/ucan-archive-tree.js';
import { CborFloat, CborTag, cidOf } from './helpers/ucan-mutations.js';

const server = await sharedOracleServer(t)();
const ORACLE = server.oracleDid;
const [alice, carol] = await Promise.all([generateKey(), generateKey()]);
const seed = process.env.UCAN_TYPES_SEED ? Number(process.env.UCAN_TYPES_SEED) : undefined;

// A nested proof: alice -> carol, who invokes or delegates to the oracle with it.
const aliceToCarol = await createDelegation({ issuer: alice, audience: carol.did(), ttlSeconds: 3600 });
const aliceInvocation = await encodeArtifact(await createInvocation({ issuer: alice, audience: ORACLE }));
const carolInvocation = await encodeArtifact(await createInvocation({ issuer: carol, audience: ORACLE }));

const bearer = (raw: string) => ({ authorization: `Bearer ${raw}`, 'x-auth-type': 'ucan' });

interface Channel {
  artifact: Delegation;
  headers(raw: string): Record<string, string>;
  /** Beside a valid invocation nothing refuses the request. */
  alwaysAccepted?: true;
}

const channels: Record<string, Channel> = {
  'an invocation (the fast path) as Authorization': {
    artifact: await createInvocation({ issuer: alice, audience: ORACLE }),
    headers: bearer,
  },
  'an invocation with a proof as Authorization': {
    artifact: await createInvocation({ issuer: carol, audience: ORACLE, proofs: [aliceToCarol] }),
    headers: bearer,
  },
  'a delegation with a proof as x-ucan-delegation alone': {
    artifact: await createDelegation({ issuer: carol, audience: ORACLE, proofs: [aliceToCarol] }),
    headers: (raw) => ({ 'x-ucan-delegation': raw }),
  },
  // Beside an invocation a delegation is only material: a broken one is left out, the request goes on.
  'a delegation with a proof beside a valid invocation': {
    artifact: await createDelegation({ issuer: carol, audience: ORACLE, proofs: [aliceToCarol] }),
    headers: (raw) => ({ ...bearer(carolInvocation), 'x-ucan-delegation': raw }),
    alwaysAccepted: true,
  },
};

/** A value of each CBOR type, with the near misses a reader may trip on (a CID as bytes, as text, as a map). */
function valuesOf(tree: UcanTree, block: Uint8Array, cid: Link): Record<CborKind, fc.Arbitrary<unknown>> {
  const leaf = fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null));
  return {
    map: fc.oneof(
      fc.dictionary(fc.string({ maxLength: 6 }), leaf, { maxKeys: 3 }),
      fc.constant({ multihash: { code: 0, digest: block } }),
      fc.constant({ '/': cid.toString() }),
      fc.constant(tree.fields),
    ),
    array: fc.oneof(fc.array(leaf, { maxLength: 3 }), fc.constant([cid])),
    bytes: fc.oneof(fc.uint8Array({ maxLength: 80 }), fc.constant(cid.bytes), fc.constant(block)),
    text: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('', '*', 'ixo:oracle', alice.did(), ORACLE, `${cid}`)),
    int: fc.oneof(fc.nat(), fc.bigInt({ min: 2n ** 53n, max: 2n ** 64n - 1n })),
    negative: fc.oneof(fc.integer({ max: -1 }), fc.bigInt({ min: -(2n ** 64n), max: -(2n ** 53n) })),
    float: fc.oneof(
      fc.double({ noInteger: true }),
      fc.integer().map((n) => new CborFloat(n)),
      fc.constantFrom(NaN, Infinity, -Infinity),
    ),
    bool: fc.boolean(),
    null: fc.constant(null),
    undefined: fc.constant(undefined),
    tag: fc.oneof(
      fc.uint8Array({ maxLength: 16 }).map((bytes) => cidOf(bytes)),
      fc.constant(identityLink(block)),
      fc.constant(new CborTag(42, cid.bytes)),
      fc.tuple(fc.integer({ min: 0, max: 1000 }), leaf).map(([tag, value]) => new CborTag(tag, value)),
    ),
  };
}

/** An identity CID carries its block inside it: the UCAN again, without a block of the archive behind it. */
const identityLink = (block: Uint8Array) => decodeLink(Uint8Array.of(1, 0x71, 0, ...varint(block.length), ...block));

function varint(n: number): number[] {
  const bytes: number[] = [];
  for (; n >= 0x80; n >>>= 7) bytes.push((n & 0x7f) | 0x80);
  return [...bytes, n];
}

const describe = ({ block, path }: Position) =>
  `${block === 'variant' ? 'variant' : `ucan[${block}]`} /${path.join('/')}`;

for (const [name, channel] of Object.entries(channels)) {
  t.test(`${name}: 200 or 401 with a reason for every CBOR type anywhere`, async (t) => {
    const tree = treeOf(channel.artifact);
    const original = await encodeArtifact(channel.artifact);
    t.equal(archiveOfTree(tree), original, 'the tree rebuilds the archive byte for byte');
    t.equal((await call(server, 'GET', '/sessions', { headers: channel.headers(original) })).status, 200, 'unchanged');

    const values = valuesOf(tree, channel.artifact.root.bytes, channel.artifact.cid);
    const cases = positionsOf(tree).flatMap((at) =>
      CBOR_KINDS.filter((kind) => kind !== at.kind).map((kind) => ({ at, kind })),
    );
    const statuses = new Map<number, number>();
    // One draw per case, several cases in flight: every case is sent each run, in a few hundred ms.
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        for (let next = cases.pop(); next; next = cases.pop()) {
          const { at, kind } = next;
          const run = await fc.check(
            fc.asyncProperty(values[kind], async (value) => {
              const raw = archiveOfTree(tree, { at, value });
              const res = await call(server, 'GET', '/sessions', { headers: channel.headers(raw) });
              statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
              const refused = res.status === 401 && typeof res.body?.reason === 'string' && res.body.reason !== '';
              if (res.status !== 200 && !refused)
                throw new Error(`${describe(at)} as ${kind}: ${res.status} ${JSON.stringify(res.body)}`);
              if (refused && ![INVALID_UCAN_MESSAGE, INVALID_DELEGATION_MESSAGE].includes(res.body.message))
                throw new Error(`${describe(at)} as ${kind}: 401 with message ${res.body.message}`);
            }),
            { numRuns: 1, ...(seed !== undefined && { seed }) },
          );
          // fast-check's own report leaves the case out of its first line: say it, the value and the seed.
          if (run.failed)
            throw new Error(
              `${(run.errorInstance as Error).message} (shrunk value ${fc.stringify(run.counterexample)}, seed ${run.seed})`,
            );
        }
      }),
    );
    t.comment(`${statuses.size} statuses: ${JSON.stringify(Object.fromEntries(statuses))}`);
    if (channel.alwaysAccepted) t.same([...statuses.keys()], [200], 'the broken delegation is left out');
    else t.ok(statuses.get(401), 'refusals reached the server');
  });
}

t.test(
  "issue 45's archive: the UCAN's CID as bytes in the variant is a 401 (400 to store) with a reason",
  async (t) => {
    const inVariant = (delegation: Delegation, value: unknown) =>
      archiveOfTree(treeOf(delegation), { at: { block: 'variant', path: ['ucan@0.9.1'], kind: 'tag' }, value });
    const reason = 'UCAN archive root is not { "ucan@0.9.1": <link> }';
    const withProof = channels['an invocation with a proof as Authorization']!.artifact;
    const invocation = await call(server, 'GET', '/sessions', {
      headers: bearer(inVariant(withProof, withProof.cid.bytes)),
    });
    t.match(invocation, { status: 401, body: { message: INVALID_UCAN_MESSAGE, reason } });
    const plain = await createDelegation({ issuer: alice, audience: ORACLE });
    const delegation = inVariant(plain, plain.cid.bytes);
    const alone = await call(server, 'GET', '/sessions', { headers: { 'x-ucan-delegation': delegation } });
    t.match(alone, { status: 401, body: { message: INVALID_DELEGATION_MESSAGE, reason } });
    const stored = await call(server, 'POST', '/delegation', {
      headers: bearer(aliceInvocation),
      body: { raw: delegation },
    });
    t.match(stored, { status: 400, body: { reason } });
  },
);

t.test('a variant that names its UCAN without a block of the archive behind it is refused', async (t) => {
  // ucanto reads both as the UCAN itself (an identity CID, or a map shaped like one); the archive's own block,
  // hash-checked, is the only UCAN the reader takes.
  const delegation = await createDelegation({ issuer: alice, audience: ORACLE });
  const block = delegation.root.bytes;
  for (const [name, value, reason] of [
    ['an identity CID', identityLink(block), /^UCAN bafy[a-z2-7]+ is not included in the archive$/],
    [
      'a map shaped like one',
      { multihash: { code: 0, digest: block } },
      'UCAN archive root is not { "ucan@0.9.1": <link> }',
    ],
  ] as const) {
    const raw = archiveOfTree(treeOf(delegation), {
      at: { block: 'variant', path: ['ucan@0.9.1'], kind: 'tag' },
      value,
    });
    const res = await call(server, 'GET', '/sessions', { headers: { 'x-ucan-delegation': raw } });
    t.match(res, { status: 401, body: { message: INVALID_DELEGATION_MESSAGE, reason } }, name);
  }
});
