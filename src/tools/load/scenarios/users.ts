// Thread: main
// Chat users for chat and ws: real Ed25519 keys and UCAN invocations minted by the tool for --oracle-did, as the
// client SDK does; each invocation is reused (the server caches its verification) and re-minted before it expires.
import { generateKey, mintInvocation } from '../../mint-ucan.js';

/** Within the server's default UCAN_AUTH_MAX_TTL_SECONDS (900). */
const TTL_SECONDS = 600;
const RENEW_AFTER_MS = (TTL_SECONDS / 2) * 1000;

export interface LoadUser {
  readonly did: string;
  invocation(): Promise<string>;
  headers(): Promise<Record<string, string>>;
}

async function newUser(oracleDid: string): Promise<LoadUser> {
  const key = await generateKey();
  let minted = 0;
  let current: Promise<string> | undefined;
  const invocation = () => {
    if (!current || Date.now() - minted > RENEW_AFTER_MS) {
      minted = Date.now();
      current = mintInvocation({ issuer: key, audience: oracleDid, ttlSeconds: TTL_SECONDS });
    }
    return current;
  };
  return {
    did: key.did(),
    invocation,
    headers: async () => ({ authorization: `Bearer ${await invocation()}`, 'x-auth-type': 'ucan' }),
  };
}

/** `count` users; journeys take them in turn. */
export async function userPool(count: number, oracleDid: string): Promise<() => LoadUser> {
  const users = await Promise.all(Array.from({ length: count }, () => newUser(oracleDid)));
  await Promise.all(users.map((u) => u.invocation()));
  let next = 0;
  return () => users[next++ % users.length];
}
