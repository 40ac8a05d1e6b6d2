// Signature checks of one artifact. All signatures of a chain are collected first and sent to the
// SignatureVerifier as one batch (one trip to the CPU pool); ucanto's validator then asks for the same
// checks through the principal parser below and reads the answers from the memo.
import { Signature, UCAN } from '@ucanto/core';
import type { DID, Delegation, DIDKey, PrincipalParser, Verifier } from '@ucanto/interface';
import { DIDResolutionError } from '@ucanto/validator';
import { didKeyOf, didKeyPublicKey, didMethod, type DidResolvers } from './did.js';
import { AuthFailure, fail, VerifierUnavailable } from './failure.js';
import type { SignatureCheck, SignatureVerifier } from './verifier.js';

const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
const memoKey = (check: SignatureCheck) => `${b64(check.publicKey)}|${b64(check.signature)}|${b64(check.data)}`;

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
  readonly #memo = new Map<string, boolean>();

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

  /** Verifies every signature of `chain` in one batch and remembers the answers. */
  async prefetch(chain: readonly Delegation[]): Promise<void> {
    const checks: SignatureCheck[] = [];
    for (const delegation of chain) {
      const { data, signature } = signedPayload(delegation);
      if (signature.code !== Signature.EdDSA) continue; // not Ed25519: verify() answers false without crypto
      for (const publicKey of await this.keysOf(delegation.issuer.did())) {
        const check = { publicKey, data, signature: signature.raw };
        if (!this.#memo.has(memoKey(check))) checks.push(check);
      }
    }
    if (checks.length === 0) return;
    const results = await this.#verify(checks);
    checks.forEach((check, i) => this.#memo.set(memoKey(check), results[i] === true));
  }

  /** True when the issuer of `delegation` signed it (with any of its keys). */
  async signatureValid(delegation: Delegation): Promise<boolean> {
    const { data, signature } = signedPayload(delegation);
    if (signature.code !== Signature.EdDSA) return false;
    for (const publicKey of await this.keysOf(delegation.issuer.did())) {
      if (await this.#check({ publicKey, data, signature: signature.raw })) return true;
    }
    return false;
  }

  async #check(check: SignatureCheck): Promise<boolean> {
    const known = this.#memo.get(memoKey(check));
    if (known !== undefined) return known;
    const [valid] = await this.#verify([check]);
    this.#memo.set(memoKey(check), valid === true);
    return valid === true;
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
        signature.code === Signature.EdDSA && this.#check({ publicKey, data, signature: signature.raw }),
    } as unknown as Verifier;
  }
}
