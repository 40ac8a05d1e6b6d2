// Thread: main
// UCAN authentication of the oracle face: the invocation first (`Authorization: Bearer` with
// `X-Auth-Type: ucan`), `x-ucan-delegation` alone as the fallback. Verified artifacts are cached by their
// text until they expire; concurrent requests with the same uncached artifact share one verification, whose
// signature checks run wherever the injected SignatureVerifier sends them.
import type { Delegation, DID, Verifier } from '@ucanto/interface';
import { artifactBytes, chainExpiration, extractArtifact } from './artifact.js';
import { ExpiringLru } from './cache.js';
import { verifyDelegation } from './delegation.js';
import { didMethod, ixoResolverUnavailable, type DidResolver, type DidResolvers } from './did.js';
import { AuthFailure, VerifierUnavailable } from './failure.js';
import { fastAudience, verifyFastInvocation, type FastAudience } from './fast/invocation.js';
import { verifyInvocation } from './invocation.js';
import { InFlight } from '../../base/in-flight.js';
import { ucanVerifications } from '../../metrics/catalogue.js';
import { authErrors } from './messages.js';
import { revocationKeyOf } from './revocation-key.js';
import { SignatureSession } from './signatures.js';
import type { SignatureVerifier } from './verifier.js';

export interface AuthIdentity {
  /** The authenticated DID: the issuer of the invocation, or of the delegation addressed to this oracle. */
  did: string;
  via: 'invocation' | 'delegation';
  /** Seconds since the epoch: the earliest expiration along the chain; absent when nothing in it expires. */
  expiration?: number;
  /**
   * Revocation keys (revocation-key.ts: the issuer's signature) of the artifact that authenticated and of the
   * proofs it embeds (shared with the verification cache: read only). Revoking any of them refuses it; the
   * event channel closes sockets opened with it.
   */
  chain: readonly string[];
  /**
   * Seconds since the epoch when the authority behind the credential ends: a delegation's whole chain; for an
   * invocation, the delegations it carries as proofs (its own short life is the request's, as for an HTTP
   * request that outlives it); absent when nothing ends it (an invocation without proofs is the user's own key).
   * An event socket lives until then (src/oracle/events/credential-watch.ts).
   */
  authorityExpiration?: number;
  /** The user's delegation (from `x-ucan-delegation`) when it was sent, is valid and was issued by `did`. */
  delegation?: Delegation;
  /** That delegation as sent (base64 CAR), e.g. to store it or to pass it on. */
  delegationRaw?: string;
}

/** The two artifacts as the HTTP headers or the WebSocket handshake (`auth: { invocation, ucanDelegation }`) carry them. */
export interface UcanArtifacts {
  invocation?: string;
  delegation?: string;
}

export type StoredDelegationCheck =
  | { ok: true; issuer: string; audience: string; expiration?: number }
  | { ok: false; reason: string };

export interface AuthenticatorOptions {
  /** The audience every artifact must name. */
  oracleDid: string;
  /** did:key of the oracle's own key, for artifacts the oracle issued under a non-did:key oracleDid. */
  oracleKeyDid?: string;
  /** Longest invocation lifetime (UCAN_AUTH_MAX_TTL_SECONDS). */
  maxTtlSeconds: number;
  /** Where Ed25519 checks run: poolVerifier(cpuPool) in the server, inProcessVerifier() in tools. */
  verifier: SignatureVerifier;
  /** Resolvers by DID method; `ixo` defaults to a slot that refuses with a clear reason. */
  resolvers?: DidResolvers;
  /** Verified artifacts kept (default 10 000). */
  cacheSize?: number;
  /** Revoked delegations: an artifact with one of them in its chain is refused (checked past the cache). */
  revocations?: { firstRevoked(keys: readonly string[]): Promise<string | undefined> };
  /** false sends every invocation through ucanto's path (the fast path's equivalence test compares the two). */
  fastPath?: boolean;
}

interface Verified {
  did: string;
  expiration: number;
  /** The decoded artifact; absent for an invocation checked by the fast path (only delegations are kept). */
  artifact?: Delegation;
  /** Revocation keys of the artifact and the proofs it embeds. */
  chain: string[];
  /** `chain` and the CIDs of the same UCANs, which revocations made before the keys were signatures name. */
  revocationKeys: string[];
  /** See AuthIdentity.authorityExpiration; Infinity when nothing ends it. */
  authorityExpiration: number;
}

type Kind = 'invocation' | 'delegation';

/** A cached artifact is verified again after this long even if it lives longer (did:ixo keys can rotate). */
export const MAX_CACHE_SECONDS = 15 * 60;

const cacheHits = ucanVerifications.with('hit');
const cacheMisses = ucanVerifications.with('miss');

export class UcanAuthenticator {
  readonly #options: AuthenticatorOptions;
  readonly #resolvers: DidResolvers;
  /**
   * By the artifact's text itself: only the same text hits (nothing to forge or collide), and V8 hashes a string
   * far faster than a sha256 of it (which was a tenth of a warm request). Each entry says the kind it passed as.
   */
  readonly #cache: ExpiringLru<Verified & { kind: Kind }>;
  readonly #inFlight = new InFlight<Verified>();
  /** The oracle's audience for the fast path (fast/invocation.ts); undefined turns the fast path off. */
  readonly #fastAudience: FastAudience | undefined;
  #hits = 0;
  #misses = 0;

  constructor(options: AuthenticatorOptions) {
    this.#options = options;
    this.#resolvers = { ixo: ixoResolverUnavailable, ...options.resolvers };
    this.#cache = new ExpiringLru(options.cacheSize ?? 10_000);
    this.#fastAudience = options.fastPath === false ? undefined : fastAudience(options.oracleDid);
  }

  get oracleDid(): string {
    return this.#options.oracleDid;
  }

  /** Authenticates a request from its lower-case headers; throws the 401 HttpError of the wire format. */
  authenticate(headers: Readonly<Record<string, string | undefined>>): Promise<AuthIdentity> {
    return this.authenticateArtifacts(artifactsFromHeaders(headers));
  }

  /** Same rules for artifacts that did not come as HTTP headers (the WebSocket handshake). */
  async authenticateArtifacts({ invocation, delegation }: UcanArtifacts): Promise<AuthIdentity> {
    if (invocation) {
      const verified = await this.#verifiedOr401('invocation', invocation);
      const identity: AuthIdentity = {
        did: verified.did,
        via: 'invocation',
        ...finite(verified.expiration),
        chain: verified.chain,
        ...authorityEnd(verified),
      };
      if (delegation) {
        // Beside an invocation the delegation is only material for downstream calls: kept when valid and the
        // same user's, otherwise left out without failing the request.
        const user = await this.#verified('delegation', delegation).catch((error: unknown) => {
          if (error instanceof AuthFailure) return undefined;
          throw error;
        });
        if (user?.did === verified.did)
          Object.assign(identity, { delegation: user.artifact!, delegationRaw: delegation });
      }
      return identity;
    }
    if (delegation) {
      const verified = await this.#verifiedOr401('delegation', delegation);
      return {
        did: verified.did,
        via: 'delegation',
        ...finite(verified.expiration),
        chain: verified.chain,
        ...authorityEnd(verified),
        delegation: verified.artifact!,
        delegationRaw: delegation,
      };
    }
    throw authErrors.missing();
  }

  /** For POST /delegation: valid, issued by `userDid`, addressed to this oracle, not expired. */
  async verifyDelegationForStorage(raw: string, userDid: string): Promise<StoredDelegationCheck> {
    try {
      return storageAnswer(await this.#verified('delegation', raw), this.oracleDid, userDid);
    } catch (error) {
      if (error instanceof AuthFailure) return { ok: false, reason: error.reason };
      throw error;
    }
  }

  /** Plugs in a resolver for a DID method (the chain's iid module for `ixo`). */
  setDidResolver(method: string, resolver: DidResolver): void {
    this.#resolvers[method] = resolver;
  }

  /** Forgets every verified artifact (benchmarks compare warm and cold caches). */
  clearCache(): void {
    this.#cache.clear();
  }

  get stats(): { cached: number; hits: number; misses: number } {
    return { cached: this.#cache.size, hits: this.#hits, misses: this.#misses };
  }

  async #verifiedOr401(kind: Kind, raw: string): Promise<Verified> {
    try {
      return await this.#verified(kind, raw);
    } catch (error) {
      if (error instanceof AuthFailure)
        throw kind === 'delegation' ? authErrors.invalidDelegation(error.reason) : authErrors.invalid(error.reason);
      throw error;
    }
  }

  /** Verified, and nothing along its chain revoked. */
  async #verified(kind: Kind, raw: string): Promise<Verified> {
    const verified = await this.#verifiedCached(kind, raw);
    // Unreadable (a node cut from NATS): 503, not a 500, and never accepted unchecked.
    const revoked = await this.#options.revocations?.firstRevoked(verified.revocationKeys).catch(() => {
      throw authErrors.revocationsUnavailable();
    });
    if (revoked !== undefined) throw new AuthFailure(`a delegation in this UCAN's chain was revoked (${revoked})`);
    return verified;
  }

  #verifiedCached(kind: Kind, raw: string): Promise<Verified> {
    const cached = this.#cache.get(raw);
    if (cached?.kind === kind) {
      this.#hits++;
      cacheHits.inc();
      return Promise.resolve(cached);
    }
    return this.#inFlight.run(`${kind}:${raw}`, async () => {
      this.#misses++;
      cacheMisses.inc();
      const verified = await verifyArtifact(kind, raw, this.#options, this.#resolvers, this.#fastAudience);
      const untilMs = Math.min(verified.expiration * 1000, Date.now() + MAX_CACHE_SECONDS * 1000);
      this.#cache.set(raw, { ...verified, kind }, untilMs);
      return verified;
    });
  }
}

export function createAuthenticator(options: AuthenticatorOptions): UcanAuthenticator {
  return new UcanAuthenticator(options);
}

/**
 * Checks a delegation for storage without an authenticator (no cache): valid along its chain, issued by
 * `options.userDid`, addressed to `oracleDid`, not expired.
 */
export async function verifyDelegationForStorage(
  raw: string,
  oracleDid: string,
  options: { userDid: string; verifier: SignatureVerifier; resolvers?: DidResolvers },
): Promise<StoredDelegationCheck> {
  try {
    const resolvers = { ixo: ixoResolverUnavailable, ...options.resolvers };
    const verified = await verifyArtifact(
      'delegation',
      raw,
      { oracleDid, maxTtlSeconds: 0, verifier: options.verifier },
      resolvers,
    );
    return storageAnswer(verified, oracleDid, options.userDid);
  } catch (error) {
    if (error instanceof AuthFailure) return { ok: false, reason: error.reason };
    throw error;
  }
}

function storageAnswer(verified: Verified, oracleDid: string, userDid: string): StoredDelegationCheck {
  if (verified.did !== userDid)
    return { ok: false, reason: `delegation is issued by ${verified.did}, not by the authenticated user ${userDid}` };
  return { ok: true, issuer: verified.did, audience: oracleDid, ...finite(verified.expiration) };
}

/**
 * The one place where reading and checking the client's bytes fails as the client's fault: whatever the readers
 * throw (ours, ucanto's, dag-ucan's, multiformats') on any input is an AuthFailure, so a 401 with its reason; only
 * a verifier that is down is the server's.
 */
async function verifyArtifact(
  kind: Kind,
  raw: string,
  options: AuthenticatorOptions,
  resolvers: DidResolvers,
  audience?: FastAudience,
): Promise<Verified> {
  try {
    return await readAndVerify(kind, raw, options, resolvers, audience);
  } catch (error) {
    if (error instanceof AuthFailure || error instanceof VerifierUnavailable) throw error;
    throw new AuthFailure(`malformed UCAN: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function readAndVerify(
  kind: Kind,
  raw: string,
  options: AuthenticatorOptions,
  resolvers: DidResolvers,
  audience?: FastAudience,
): Promise<Verified> {
  const bytes = artifactBytes(raw);
  // The common invocation (did:key, no proofs) skips ucanto's decode, format and access(); the rest goes below.
  const fast = kind === 'invocation' && audience ? await verifyFastInvocation(bytes, audience, options) : undefined;
  if (fast) return fast;
  const artifact = await extractArtifact(bytes);
  const session = new SignatureSession(options.verifier, resolvers);
  const verified =
    kind === 'invocation'
      ? await verifyInvocation(artifact, {
          oracleDid: options.oracleDid,
          authority: authorityOf(options, session),
          maxTtlSeconds: options.maxTtlSeconds,
          session,
        })
      : await verifyDelegation(artifact, options.oracleDid, session);
  // An invocation's authority is its proofs (chainOf puts the root first); a delegation's is its whole chain.
  const authorityExpiration = kind === 'invocation' ? chainExpiration(verified.chain.slice(1)) : verified.expiration;
  const chain = verified.chain.map(revocationKeyOf);
  const revocationKeys = [...chain, ...verified.chain.map((link) => link.cid.toString())];
  return { did: verified.did, expiration: verified.expiration, authorityExpiration, artifact, chain, revocationKeys };
}

/** ucanto's `authority`: the oracle's own key under the oracle DID, or a principal that never verifies. */
function authorityOf(options: AuthenticatorOptions, session: SignatureSession): Verifier {
  const keyDid = options.oracleKeyDid ?? (didMethod(options.oracleDid) === 'key' ? options.oracleDid : undefined);
  if (keyDid) return session.principal.parse(keyDid as DID).withDID(options.oracleDid as DID);
  return {
    did: () => options.oracleDid,
    toDIDKey: () => options.oracleDid,
    withDID: () => authorityOf(options, session),
    verify: () => false,
  } as unknown as Verifier;
}

/** The artifacts of HTTP headers: the bearer only with `X-Auth-Type: ucan`, `x-ucan-delegation` as sent. */
export function artifactsFromHeaders(headers: Readonly<Record<string, string | undefined>>): UcanArtifacts {
  const artifacts: UcanArtifacts = {};
  // The bearer is a UCAN only when the client says so; other bearer tokens are not ours to read.
  if (headers['x-auth-type']?.trim().toLowerCase() === 'ucan') {
    // Trim, then strip the scheme: a lazy `(.+?)\s*$` capture retried `$` at every character of a ~1 KB token.
    const value = headers.authorization?.trim() ?? '';
    const scheme = /^bearer\s+/i.exec(value);
    if (scheme) artifacts.invocation = value.slice(scheme[0].length);
  }
  const delegation = headers['x-ucan-delegation']?.trim();
  if (delegation) artifacts.delegation = delegation;
  return artifacts;
}

const finite = (expiration: number) => (Number.isFinite(expiration) ? { expiration } : {});
const authorityEnd = ({ authorityExpiration }: Verified) =>
  Number.isFinite(authorityExpiration) ? { authorityExpiration } : {};
