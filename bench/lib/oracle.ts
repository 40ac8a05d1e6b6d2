// The oracle under benchmark: the real server with a fresh oracle key, a user key, and helpers to mint
// invocations and create sessions over its public API.
import { formatKey, generateKey, mintInvocation } from '../../src/tools/mint-ucan.js';
import { portFor, startServerProcess, type LoadTarget, type StartOptions } from './process.js';

export const ucanHeaders = (invocation: string) => ({ authorization: `Bearer ${invocation}`, 'x-auth-type': 'ucan' });

export interface OracleKeys {
  oracleDid: string;
  oracleKey: string;
  user: Awaited<ReturnType<typeof generateKey>>;
}

export async function oracleKeys(): Promise<OracleKeys> {
  const oracle = await generateKey();
  return { oracleDid: oracle.did(), oracleKey: formatKey(oracle), user: await generateKey() };
}

export const startOracle = (keys: OracleKeys, env: Record<string, string> = {}, options: StartOptions = {}) =>
  startServerProcess({ ORACLE_PRIVATE_KEY: keys.oracleKey, ...env }, options);

/** One invocation good for the whole run (the warm path: verified once, then cached). */
export const warmInvocation = (keys: OracleKeys) =>
  mintInvocation({ issuer: keys.user, audience: keys.oracleDid, ttlSeconds: 900 });

/** `count` distinct invocations: the same fields in the same second would sign to the same bytes. */
export async function distinctInvocations(keys: OracleKeys, count: number): Promise<string[]> {
  const now = Math.floor(Date.now() / 1000);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(
      await mintInvocation({
        issuer: keys.user,
        audience: keys.oracleDid,
        notBefore: now - 60 - (i % 1000),
        expiration: now + 600 + Math.floor(i / 1000),
      }),
    );
  }
  return out;
}

/** `count` chat sessions; with several ports, session i is created through the port caller i sends to. */
export async function createSessions(
  server: Pick<LoadTarget, 'port' | 'ports'>,
  invocation: string,
  count: number,
): Promise<string[]> {
  const sessions: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`http://127.0.0.1:${portFor(server, i)}/sessions`, {
      method: 'POST',
      headers: ucanHeaders(invocation),
    });
    if (res.status !== 201) throw new Error(`POST /sessions answered ${res.status}`);
    sessions.push(((await res.json()) as { sessionId: string }).sessionId);
  }
  return sessions;
}
