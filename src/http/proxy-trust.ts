// Thread: main
// The client address behind trusted proxies, resolved as `proxy-addr` does: the socket peer and the
// X-Forwarded-For entries are walked from the right (nearest hop first), skipping hops that are trusted; the first
// untrusted one is the client. A hop is trusted by position (TRUST_PROXY_HOPS; TRUST_PROXY_ENABLED=true alone
// means one) and/or by address (TRUSTED_PROXIES). Entries that are not IP addresses are never trusted, and never
// become the client address either: the walk then stops at the hop that handed them over.
import { isIP } from 'node:net';
import proxyaddr from 'proxy-addr';
import { isValidAddressPattern, normalizeAddress } from './client-address.js';

/** Named ranges proxy-addr understands, usable in TRUSTED_PROXIES. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

export interface ProxyTrustSettings {
  TRUST_PROXY_ENABLED: boolean;
  /** 0 = not set. */
  TRUST_PROXY_HOPS: number;
  TRUSTED_PROXIES: readonly string[];
}

/** Whether `hop` (0 = the socket peer) at `address` may be believed about the address before it. */
export type ProxyTrust = (address: string, hop: number) => boolean;

export function isValidProxyPattern(pattern: string): boolean {
  return NAMED_RANGES.has(pattern) || isValidAddressPattern(pattern);
}

/** The trust of the configuration, or undefined when no proxy is trusted (X-Forwarded-For is then ignored). */
export function compileProxyTrust(settings: ProxyTrustSettings): ProxyTrust | undefined {
  const byAddress = settings.TRUSTED_PROXIES.length ? proxyaddr.compile([...settings.TRUSTED_PROXIES]) : undefined;
  const hops = settings.TRUST_PROXY_HOPS || (settings.TRUST_PROXY_ENABLED && !byAddress ? 1 : Infinity);
  if (hops === Infinity && !byAddress) return undefined;
  return (address, hop) => hop < hops && isIP(address) !== 0 && (!byAddress || byAddress(address, hop));
}

/** The client address from the (normalised) socket peer and the X-Forwarded-For header. */
export function resolveForwarded(peer: string, forwardedFor: string, trust: ProxyTrust): string {
  const request = { headers: { 'x-forwarded-for': forwardedFor }, socket: { remoteAddress: peer } };
  const chain = proxyaddr.all(request as unknown as Parameters<typeof proxyaddr.all>[0], trust);
  for (let i = chain.length - 1; i > 0; i--) {
    if (isIP(chain[i])) return normalizeAddress(chain[i]);
  }
  return peer;
}

/** Whether any proxy is trusted (then operator routes need OPERATOR_TOKEN, see operator-guard.ts). */
export function trustsProxies(settings: ProxyTrustSettings): boolean {
  return compileProxyTrust(settings) !== undefined;
}
