// Thread: main
// Client addresses: normalisation of what uWebSockets.js reports, loopback checks and allow-list (CIDR) matching.
import { BlockList, isIP } from 'node:net';
import { BoundedMap } from '../base/bounded-map.js';

/** uWS reports IPv4 peers on a dual-stack socket as IPv4-mapped IPv6 (`0000:...:ffff:7f00:0001`). */
export function normalizeAddress(raw: string): string {
  const address = raw.trim().toLowerCase();
  if (isIP(address) === 4) return address;
  if (isIP(address) !== 6) return address;
  const groups = expandIPv6(address);
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) return `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`;
  return groups
    .map((g) => g.toString(16))
    .join(':')
    .replace(/(^|:)0(:0)+(:|$)/, '::');
}

/**
 * A peer as uWS reports it in binary (4 bytes for IPv4, 16 for IPv6 and IPv4-mapped IPv6; none when the socket
 * has no peer), written as uWS's text form (`a.b.c.d`, or eight 4-digit hex groups) and normalised like it.
 */
export function addressOfBytes(bytes: Uint8Array): string {
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
  if (bytes.length !== 16) return '';
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16).padStart(4, '0'));
  return normalizeAddress(groups.join(':'));
}

/**
 * What a peer's normalised address is remembered by: a number for IPv4 and IPv4-mapped IPv6 (the same address
 * either way), else the bytes as a string. Cheaper than decoding uWS's text form of the address per request.
 */
export function peerKey(bytes: Uint8Array): number | string {
  if (bytes.length === 4) return ((bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3]) >>> 0;
  if (bytes.length === 16 && isMappedIPv4(bytes))
    return ((bytes[12] << 24) | (bytes[13] << 16) | (bytes[14] << 8) | bytes[15]) >>> 0;
  return String.fromCharCode(...bytes);
}

function isMappedIPv4(bytes: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (bytes[i] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

function expandIPv6(address: string): number[] {
  const [head, tail] = address.includes('::') ? address.split('::') : [address, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':') : []);
  let left = parse(head);
  let right = parse(tail);
  // An embedded IPv4 tail (`::ffff:1.2.3.4`) counts as two groups.
  const last = (right.length ? right : left).at(-1);
  if (last?.includes('.')) {
    const octets = last.split('.').map(Number);
    const groups = [((octets[0] << 8) | octets[1]).toString(16), ((octets[2] << 8) | octets[3]).toString(16)];
    if (right.length) right = [...right.slice(0, -1), ...groups];
    else left = [...left.slice(0, -1), ...groups];
  }
  const fill = tail === undefined ? [] : new Array(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16) || 0);
}

/** What the rate limit counts by: the address, or for IPv6 its /64 (one subscriber's usual allocation). */
export function rateLimitKey(address: string): string {
  if (isIP(address) !== 6) return address;
  return `${expandIPv6(address)
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

export function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.');
}

function splitPattern(pattern: string): { address: string; prefix?: number } {
  const [address, prefix] = pattern.trim().split('/');
  return { address: normalizeAddress(address), prefix: prefix === undefined ? undefined : Number(prefix) };
}

/** True when `pattern` is an IPv4/IPv6 address or CIDR. */
export function isValidAddressPattern(pattern: string): boolean {
  const { address, prefix } = splitPattern(pattern);
  const family = isIP(address);
  if (!family) return false;
  if (prefix === undefined) return true;
  return Number.isInteger(prefix) && prefix >= 0 && prefix <= (family === 4 ? 32 : 128);
}

/** A set of addresses and CIDRs, as given in RATE_LIMIT_ALLOWLIST. */
export class AddressList {
  readonly #list = new BlockList();
  /** BlockList.check allocates (a SocketAddress) on every call and is asked once per request: answers kept. */
  /** Bounded like the rate limiter's own map: many distinct clients only cost a re-check. */
  readonly #answers = new BoundedMap<string, boolean>(10_000);
  readonly size: number;

  constructor(patterns: readonly string[]) {
    for (const pattern of patterns) {
      const { address, prefix } = splitPattern(pattern);
      const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.#list.addAddress(address, type);
      else this.#list.addSubnet(address, prefix, type);
    }
    this.size = patterns.length;
  }

  has(address: string): boolean {
    if (this.size === 0) return false;
    let answer = this.#answers.get(address);
    if (answer === undefined) {
      const family = isIP(address);
      answer = family !== 0 && this.#list.check(address, family === 4 ? 'ipv4' : 'ipv6');
      this.#answers.set(address, answer);
    }
    return answer;
  }
}
