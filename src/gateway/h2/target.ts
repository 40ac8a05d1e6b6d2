// Thread: main (the gateway's HTTP/2 client)
// What a gRPC target string names: the addresses to try in order
// (pick-first), whether the node speaks TLS, and the authority the calls carry (and TLS checks the certificate
// against). The forms grpc-js accepts for a unary client, plus the grpcs:// and https:// schemes for TLS.

/** One place a node listens: host (a name, resolved when dialled, or an IP) and port, or a unix socket. */
export type H2Address = { host: string; port: number } | { socketPath: string };

export interface ParsedTarget {
  /** Tried in this order; a host name stands for every A/AAAA record it resolves to. */
  addresses: H2Address[];
  /** grpcs:// or https://: TLS with ALPN h2; the name is checked against the node's certificate. */
  tls: boolean;
  /** `:authority` of every call (and the TLS server name when it is a host name). */
  authority: string;
  /** dns://server/name: the DNS server (host or host:port) to resolve the name with; unset: the system resolver. */
  dnsServer?: string;
}

const DEFAULT_PORT = 443; // as grpc-js, for a target without a port

/** undefined for what this client does not dial (xds:, other schemes, a malformed address). */
export function parseTarget(target: string): ParsedTarget | undefined {
  if (target.startsWith('unix:')) {
    const path = target.startsWith('unix://') ? target.slice('unix://'.length) : target.slice('unix:'.length);
    return path ? { addresses: [{ socketPath: path }], tls: false, authority: 'localhost' } : undefined;
  }
  const scheme = /^(grpcs|https|grpc|http):\/\/([^/]+)\/?$/i.exec(target);
  if (scheme) {
    const tls = /^(grpcs|https)$/i.test(scheme[1]);
    const address = hostPort(scheme[2], tls ? 443 : 80);
    return address && { addresses: [address], tls, authority: authorityOf(address) };
  }
  if (target.startsWith('ipv4:') || target.startsWith('ipv6:')) {
    const addresses = target
      .slice(5)
      .split(',')
      .map((part) => hostPort(part.trim(), DEFAULT_PORT));
    if (addresses.length === 0 || addresses.some((address) => address === undefined)) return undefined;
    const list = addresses as { host: string; port: number }[];
    return { addresses: list, tls: false, authority: authorityOf(list[0]) };
  }
  let rest = target;
  let dnsServer: string | undefined;
  if (rest.startsWith('dns:')) {
    rest = rest.slice('dns:'.length);
    if (rest.startsWith('//')) {
      const slash = rest.indexOf('/', 2);
      if (slash === -1) return undefined;
      dnsServer = rest.slice(2, slash) || undefined;
      rest = rest.slice(slash + 1);
    }
  } else if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rest)) {
    return undefined;
  }
  const address = hostPort(rest, DEFAULT_PORT);
  return (
    address && {
      addresses: [address],
      tls: false,
      authority: authorityOf(address),
      ...(dnsServer ? { dnsServer } : {}),
    }
  );
}

/** `host`, `host:port`, `[v6]` or `[v6]:port`. */
function hostPort(text: string, defaultPort: number): { host: string; port: number } | undefined {
  const bracket = /^\[([0-9a-fA-F:.]+)\](?::(\d{1,5}))?$/.exec(text);
  if (bracket) return portIn({ host: bracket[1], port: Number(bracket[2] ?? defaultPort) });
  const colon = text.lastIndexOf(':');
  if (colon === -1) return /^[^\s/:@]+$/.test(text) ? { host: text, port: defaultPort } : undefined;
  const port = text.slice(colon + 1);
  const host = text.slice(0, colon);
  if (!/^\d{1,5}$/.test(port) || !/^[^\s/:@]+$/.test(host)) return undefined;
  return portIn({ host, port: Number(port) });
}

function portIn(address: { host: string; port: number }) {
  return address.port > 0 && address.port < 65_536 ? address : undefined;
}

/** host:port, an IPv6 literal in brackets. */
export function authorityOf(address: H2Address): string {
  if ('socketPath' in address) return 'localhost';
  return address.host.includes(':') ? `[${address.host}]:${address.port}` : `${address.host}:${address.port}`;
}

/** A target as the log and /health name it (unix paths included). */
export function describeAddress(address: H2Address): string {
  return 'socketPath' in address ? `unix:${address.socketPath}` : authorityOf(address);
}
