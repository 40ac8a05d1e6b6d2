// Thread: any
// Minting UCANs the way the React client SDK does: a user-to-oracle delegation and a short-lived
// invocation of `{ can: '*', with: 'ixo:oracle' }`, each as standard base64 of a ucanto archive.
// Used by the mint-ucan tool, by tests and by benchmarks.
import { delegate, invoke } from '@ucanto/core';
import type { Capability, Delegation, DID, Principal, Signer } from '@ucanto/interface';
import { ed25519 } from '@ucanto/principal';
import { ORACLE_RESOURCE } from './invocation.js';
import { generateSigner, parseSigner } from './node-signer.js';

export const ORACLE_CAPABILITY = { can: '*', with: ORACLE_RESOURCE } as const;

export interface MintOptions {
  issuer: Signer;
  /** The audience DID (the oracle, or the next principal of a chain). */
  audience: string;
  /** Lifetime from now in seconds; ignored when `expiration` is given. */
  ttlSeconds?: number;
  /** Absolute expiration in seconds since the epoch; `Infinity` for none. */
  expiration?: number;
  notBefore?: number;
  proofs?: Delegation[];
}

const principal = (did: string): Principal => ({ did: () => did as DID });
const expirationOf = (options: MintOptions, defaultTtl: number) =>
  options.expiration ?? Math.floor(Date.now() / 1000) + (options.ttlSeconds ?? defaultTtl);

/** A fresh Ed25519 user key. */
export const generateKey = async () => generateSigner();
/** The key in ucanto's formatted form (what ORACLE_PRIVATE_KEY and key files hold). */
export const formatKey = (signer: Signer) => ed25519.format(signer as ed25519.EdSigner);
export const parseKey = (text: string) => parseSigner(text);

/** A delegation (default: `{ can: '*', with: 'ixo:oracle' }` for one hour). */
export function createDelegation(options: MintOptions & { capabilities?: Capability[] }): Promise<Delegation> {
  return delegate({
    issuer: options.issuer,
    audience: principal(options.audience),
    capabilities: (options.capabilities ?? [ORACLE_CAPABILITY]) as [Capability, ...Capability[]],
    expiration: expirationOf(options, 3600),
    notBefore: options.notBefore,
    proofs: options.proofs,
  });
}

/** An invocation (default: `{ can: '*', with: 'ixo:oracle' }` for five minutes). */
export async function createInvocation(options: MintOptions & { capability?: Capability }): Promise<Delegation> {
  return await invoke({
    issuer: options.issuer,
    audience: principal(options.audience),
    capability: options.capability ?? ORACLE_CAPABILITY,
    expiration: expirationOf(options, 300),
    notBefore: options.notBefore,
    proofs: options.proofs,
  }).delegate();
}

/** Standard padded base64 of the ucanto archive (CAR) of a delegation or invocation. */
export async function encodeArtifact(delegation: Delegation): Promise<string> {
  const archive = await delegation.archive();
  if (archive.error) throw archive.error;
  return Buffer.from(archive.ok).toString('base64');
}

export async function mintDelegation(options: MintOptions & { capabilities?: Capability[] }): Promise<string> {
  return encodeArtifact(await createDelegation(options));
}

export async function mintInvocation(options: MintOptions & { capability?: Capability }): Promise<string> {
  return encodeArtifact(await createInvocation(options));
}
