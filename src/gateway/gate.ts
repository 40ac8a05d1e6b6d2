// Thread: main
// Optional API-key gating (GATEWAY_API_KEYS): no `x-api-key` -> 401, an unknown key -> 403.
// Keys are compared by SHA-256 digest so the lookup time says nothing about the configured keys.
import { createHash } from 'node:crypto';
import { gatewayErrors } from './errors.js';

const digest = (key: string) => createHash('sha256').update(key).digest('base64');

export type Gate = (headers: Readonly<Record<string, string>>) => void;

/** A check that throws the 401/403 answer; undefined when no keys are configured. */
export function createKeyGate(keys: readonly string[]): Gate | undefined {
  if (keys.length === 0) return undefined;
  const known = new Set(keys.map(digest));
  return function checkApiKey(headers) {
    const key = headers['x-api-key'];
    if (!key) throw gatewayErrors.missingApiKey();
    if (!known.has(digest(key))) throw gatewayErrors.unknownApiKey();
  };
}
