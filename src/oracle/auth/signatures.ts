// Thread: main
// Signature checks of one artifact. ucanto's validator checks the invocation's own signature through the
// principal parser below; the proofs are checked here, all at once, so a pooled SignatureVerifier sends
// them in one trip. Each signed payload is formatted once: formatting it (dag-ucan's JSON form of the
// UCAN) costs more than the Ed25519 check itself.
import { Signature, UCAN } from '@ucanto/core';
import type { DID, Delegation, DIDKey, PrincipalParser, Verifier } from '@ucanto/interface';
import { DIDResolutionError } from '@ucanto/validator';
import { didKeyOf, didKeyPublicKey, didMethod, type DidResolvers } from './did.js';
import { AuthFailure, fail, VerifierUnavailable } from './failure.js';
import type { SignatureCheck, SignatureVerifier } from './verifier.js';

/** The bytes an issuer signed and its signature, exactly as ucanto computes them when it verifies. */
function signedPayload(delegation: Delegation): { data: Uint8Array; signature: { code: number; raw: Uint8Array } } {
  let captured: { data: Uint8Array; signature: { code: number; raw: Uint8Array } } | undefined;
  // dag-ucan does not export its payload encoder; a recording verifier receives what a real one would.
  void UCAN.verifySignature(delegation.data, {
    did: () => delegation.issuer.did(),
    verify(data: Uint8Array, signature: { code: number; raw: Uint8Array }) {
      captured = { data, signature };
      return true;
    },
  } as unknown as UCAN.Verifier);
  if (!captured) fail(`cannot read the signature of ${delegation.cid}`);
  return captured;
}

export class SignatureSession {
  readonly #verifier: SignatureVerifier;
  readonly #resolvers: DidResolvers;
  readonly #keys = new Map<string, Promise<Uint8Array[]>>();

  constructor(verifier: SignatureVerifier, resolvers: DidResolvers) {
    this.#verifier = verifier;
    this.#resolvers = resolvers;
  }

  /** The Ed25519 keys that may sign for `did` (resolved once per session). */
  keysOf(did: string): Promise<Uint8Array[]> {
    let keys = this.#keys.get(did);
    if (!keys) {
      keys = this.#resolve(did);
      this.#keys.set(did, keys);
    }
    return keys;
  }

  async #resolve(did: string): Promise<Uint8Array[]> {
    const method = didMethod(did);
    if (method === 'key') return [didKeyPublicKey(did)];
    // The method comes from the artifact: `did:constructor:…` must not find Object.prototype's members.
    const resolver = method && Object.hasOwn(this.#resolvers, method) ? this.#resolvers[method] : undefined;
    if (!resolver) fail(`cannot verify ${did}: the did:${method ?? '?'} method is not supported`);
    const keys = await resolver.resolve(did).catch((error: unknown) => {
      if (error instanceof AuthFailure) throw error;
      throw new AuthFailure(`cannot resolve ${did}: ${error instanceof Error ? error.message : String(error)}`);
    });
    if (keys.length === 0) fail(`${did} has no Ed25519 verification method`);
    return keys;
  }

  /** True when the issuer of each delegation signed it (with any of its keys); checked concurrently. */
  signaturesValid(delegations: readonly Delegation[]): Promise<boolean[]> {
    return Promise.all(delegations.map((delegation) => this.signatureValid(delegation)));
  }

  /** True when the issuer of `delegation` signed it (with any of its keys). */
  async signatureValid(delegation: Delegation): Promise<boolean> {
    const { data, signature } = signedPayload(delegation);
    if (signature.code !== Signature.EdDSA) return false;
    const keys = await this.keysOf(delegation.issuer.did());
    const results = await this.#verify(keys.map((publicKey) => ({ publicKey, data, signature: signature.raw })));
    return results.includes(true);
  }

  async #verify(checks: SignatureCheck[]): Promise<boolean[]> {
    try {
      return await this.#verifier(checks);
    } catch (error) {
      throw new VerifierUnavailable(error);
    }
  }

  /** ucanto's principal parser: did:key verifiers whose checks go through this session. */
  readonly principal: PrincipalParser = {
    parse: (did) => this.#verifierFor(did as DIDKey, didKeyPublicKey(did), did),
  };

  /** ucanto's resolveDIDKey: the did:key form of each key of a non-did:key issuer. */
  readonly resolveDIDKey = async (did: DID) => {
    try {
      return { ok: (await this.keysOf(did)).map(didKeyOf) as DIDKey[] };
    } catch (error) {
      if (error instanceof AuthFailure) return { error: new DIDResolutionError(did) };
      throw error;
    }
  };

  #verifierFor(keyDid: DIDKey, publicKey: Uint8Array, id: DID): Verifier {
    return {
      did: () => id,
      toDIDKey: () => keyDid,
      withDID: (other: DID) => this.#verifierFor(keyDid, publicKey, other),
      verify: (data: Uint8Array, signature: { code: number; raw: Uint8Array }) =>
        signature.code === Signature.EdDSA &&
        this.#verify([{ publicKey, data, signature: signature.raw }]).then(([valid]) => valid === true),
    } as unknown as Verifier;
  }
}
