// The page's own identity: an Ed25519 key made in this browser (kept in localStorage), a delegation to the
// oracle and short-lived invocations, minted with the same ucanto libraries the server verifies with
// (see src/oracle/auth/mint.ts for the server-side twin used by tests and the mint-ucan tool).
import { delegate, invoke } from '@ucanto/core';
import type { Capability, Delegation, DID, Principal, Signer } from '@ucanto/interface';
import { ed25519 } from '@ucanto/principal';

/** What every oracle route accepts: `{ can: '*', with: 'ixo:oracle' }` (wire format, "Authentication"). */
const ORACLE_CAPABILITY: Capability = { can: '*', with: 'ixo:oracle' };
const KEY_STORAGE = 'playground.ed25519-key';
const INVOCATION_TTL_SECONDS = 300;
const DELEGATION_TTL_SECONDS = 24 * 3600;
/** An invocation is re-minted this long before it expires, so a request never carries a stale one. */
const RENEW_MARGIN_SECONDS = 60;

const now = () => Math.floor(Date.now() / 1000);

/** Standard padded base64 of the ucanto archive, as the server's decodeArtifact reads it. */
async function encode(delegation: Delegation): Promise<string> {
  const archive = await delegation.archive();
  if (archive.error) throw archive.error;
  let binary = '';
  for (const byte of archive.ok) binary += String.fromCharCode(byte);
  return btoa(binary);
}

async function loadOrCreateKey(fresh: boolean): Promise<Signer> {
  const saved = fresh ? null : localStorage.getItem(KEY_STORAGE);
  if (saved) {
    try {
      return ed25519.parse(saved);
    } catch {
      // A damaged entry: make a new key below.
    }
  }
  const signer = await ed25519.generate();
  localStorage.setItem(KEY_STORAGE, ed25519.format(signer));
  return signer;
}

export interface DelegationArtifact {
  raw: string;
  issuer: string;
  audience: string;
  expiration: number;
}

export class UcanIdentity {
  #invocation: { value: string; expiration: number } | undefined;

  private constructor(
    readonly signer: Signer,
    readonly oracleDid: string,
  ) {}

  /** `fresh`: forget the saved key and make a new one (a new user for the oracle). */
  static async open(oracleDid: string, fresh = false): Promise<UcanIdentity> {
    return new UcanIdentity(await loadOrCreateKey(fresh), oracleDid);
  }

  get did(): string {
    return this.signer.did();
  }

  get #audience(): Principal {
    return { did: () => this.oracleDid as DID };
  }

  /** A delegation of the oracle capability from this user to the oracle (POST /delegation stores it). */
  async delegation(): Promise<DelegationArtifact> {
    const expiration = now() + DELEGATION_TTL_SECONDS;
    const delegation = await delegate({
      issuer: this.signer,
      audience: this.#audience,
      capabilities: [ORACLE_CAPABILITY],
      expiration,
    });
    return { raw: await encode(delegation), issuer: this.did, audience: this.oracleDid, expiration };
  }

  /** A current invocation (reused until shortly before it expires; the server caches verified ones). */
  async invocation(): Promise<string> {
    if (this.#invocation && this.#invocation.expiration - RENEW_MARGIN_SECONDS > now()) return this.#invocation.value;
    const expiration = now() + INVOCATION_TTL_SECONDS;
    const invocation = await invoke({
      issuer: this.signer,
      audience: this.#audience,
      capability: ORACLE_CAPABILITY,
      expiration,
    }).delegate();
    this.#invocation = { value: await encode(invocation), expiration };
    return this.#invocation.value;
  }

  /** Headers of an authenticated oracle request. */
  async headers(): Promise<Record<string, string>> {
    return { authorization: `Bearer ${await this.invocation()}`, 'x-auth-type': 'ucan' };
  }
}
