// Thread: main
// did:ixo identities: the Ed25519 keys of a DID come from its IidDocument in the chain's iid module, read
// through the chain client the composition root hands in (src/app/chain-client.ts). Every verification method whose
// type names Ed25519 and whose `publicKeyMultibase` is base58btc (`z...`) is a key the DID may sign with; all
// of them are tried. Answers are cached (a key rotation shows after at most `cacheSeconds`), and concurrent
// lookups of one DID share one call.
import { base58btc } from '@ucanto/core';
import { InFlight } from '../../base/in-flight.js';
import { ExpiringLru } from './cache.js';
import { ED25519_PUB_PREFIX, type DidResolver } from './did.js';
import { isUnsafeEd25519Key } from './ed25519.js';
import { AuthFailure } from './failure.js';

/** The chain's iid module, as far as the oracle reads it (the composition root's chain client). */
export interface IidDocuments {
  /** The DID's document; undefined when the chain has none. Rejects when the chain did not answer. */
  iidDocument(did: string): Promise<IidDocumentKeys | undefined>;
}

interface VerificationMethod {
  id?: string;
  type?: string;
  publicKeyMultibase?: string;
}

export interface IidDocumentKeys {
  id?: string;
  verificationMethod?: VerificationMethod[];
  metadata?: { deactivated?: boolean } | null;
}

/**
 * The raw Ed25519 keys of a document. A `z...` value is either a multikey (0xed01 prefix, as in did:key)
 * or the bare 32-byte key; anything else, and a small-order or non-canonical key, is skipped.
 */
export function ed25519KeysOf(document: IidDocumentKeys): Uint8Array[] {
  const keys: Uint8Array[] = [];
  for (const method of document.verificationMethod ?? []) {
    const text = method.publicKeyMultibase;
    if (!method.type?.includes('Ed25519') || !text?.startsWith('z')) continue;
    let bytes: Uint8Array;
    try {
      bytes = base58btc.decode(text);
    } catch {
      continue;
    }
    const key =
      bytes.length === 34 && bytes[0] === ED25519_PUB_PREFIX[0] && bytes[1] === ED25519_PUB_PREFIX[1]
        ? bytes.slice(2)
        : bytes;
    // A small-order or non-canonical key would let anyone sign for the DID.
    if (key.length === 32 && !isUnsafeEd25519Key(key)) keys.push(key);
  }
  return keys;
}

export interface IxoResolverOptions {
  /** How long resolved keys are trusted (default 300 s). */
  cacheSeconds?: number;
  cacheSize?: number;
}

export interface IxoDidResolver extends DidResolver {
  /** Chain lookups made (cache misses). */
  readonly lookups: number;
}

export function createIxoDidResolver(chain: IidDocuments, options: IxoResolverOptions = {}): IxoDidResolver {
  const cacheMs = (options.cacheSeconds ?? 300) * 1000;
  const cache = new ExpiringLru<Uint8Array[]>(options.cacheSize ?? 10_000);
  const inFlight = new InFlight<Uint8Array[]>();
  let lookups = 0;

  async function lookup(did: string): Promise<Uint8Array[]> {
    lookups++;
    let iidDocument: IidDocumentKeys | undefined;
    try {
      iidDocument = await chain.iidDocument(did);
    } catch (error) {
      throw new Error(`the chain's iid module did not answer (${(error as Error).message})`);
    }
    if (!iidDocument) throw new AuthFailure(`${did} has no iid document on the chain`);
    if (iidDocument.metadata?.deactivated) throw new AuthFailure(`${did} is deactivated on the chain`);
    const keys = ed25519KeysOf(iidDocument);
    cache.set(did, keys, Date.now() + cacheMs);
    return keys;
  }

  return {
    get lookups() {
      return lookups;
    },
    resolve(did) {
      const cached = cache.get(did);
      if (cached) return Promise.resolve(cached);
      return inFlight.run(did, () => lookup(did));
    },
  };
}
