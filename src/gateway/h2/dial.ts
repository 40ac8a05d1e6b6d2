// Thread: main (the gateway's HTTP/2 client)
// Opens the socket of one connection attempt: TCP or TLS (ALPN h2,
// SNI, the CA store below), a unix socket, and names resolved to every A/AAAA record, tried in turn by node's
// happy-eyeballs connect (autoSelectFamily), through the system resolver or the DNS server a dns:// target names.
import { existsSync, readFileSync } from 'node:fs';
import { Resolver } from 'node:dns';
import { connect as netConnect, isIP, type LookupFunction, type Socket } from 'node:net';
import { connect as tlsConnect, createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import type { H2Address } from './target.js';

/** TLS of a channel: one secure context for every connection, and the name to check the certificate against. */
export interface TlsSettings {
  secureContext: SecureContext;
  /** SNI and certificate name: the target's host name (an IP address target is checked against the IP). */
  servername?: string;
}

/** The system's CA bundle (the first of these that exists), besides node's own Mozilla roots. */
const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem'];

export interface TlsFiles {
  /** Extra CA certificates (PEM) to trust, e.g. a private chain's own CA. */
  caFile?: string;
  /** Client certificate and key (PEM) for a node that asks for one (mTLS). */
  certFile?: string;
  keyFile?: string;
}

/**
 * The secure context every TLS connection of the channel shares (built once: parsing the roots per connection
 * would cost milliseconds each): node's roots, the system store, NODE_EXTRA_CA_CERTS (as Node's own clients trust it)
 * and `caFile`. Throws when `caFile` cannot be read.
 */
export function tlsContext(files: TlsFiles): SecureContext {
  const ca: string[] = [...rootCertificates];
  const system = [process.env.SSL_CERT_FILE, ...SYSTEM_BUNDLES].find((path) => path && existsSync(path));
  if (system) ca.push(readFileSync(system, 'latin1'));
  // Node adds NODE_EXTRA_CA_CERTS to its default store only, which a context given its own `ca` list does not use.
  const extra = process.env.NODE_EXTRA_CA_CERTS;
  if (extra && existsSync(extra)) ca.push(readFileSync(extra, 'latin1'));
  if (files.caFile) ca.push(readFileSync(files.caFile, 'latin1'));
  return createSecureContext({
    ca,
    ...(files.certFile ? { cert: readFileSync(files.certFile) } : {}),
    ...(files.keyFile ? { key: readFileSync(files.keyFile) } : {}),
  });
}

/** Resolves names through one DNS server (dns://server/name targets), every A and AAAA record. */
export function lookupThrough(server: string): LookupFunction {
  const resolver = new Resolver({ timeout: 2000, tries: 2 });
  resolver.setServers([server]);
  return (hostname, options, callback) => {
    const all = typeof options === 'object' && options.all === true;
    const found: { address: string; family: number }[] = [];
    let pending = 2;
    let firstError: NodeJS.ErrnoException | null = null;
    const done = (family: number) => (error: NodeJS.ErrnoException | null, addresses: string[]) => {
      if (error) firstError ??= error;
      else for (const address of addresses) found.push({ address, family });
      if (--pending > 0) return;
      // IPv4 first: the order a system resolver gives on most hosts, and one stable order for pick-first.
      found.sort((a, b) => a.family - b.family);
      if (found.length === 0)
        return (callback as (e: Error) => void)(
          firstError ?? Object.assign(new Error(`queryA ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }),
        );
      if (all) return (callback as (e: null, a: typeof found) => void)(null, found);
      (callback as (e: null, a: string, f: number) => void)(null, found[0].address, found[0].family);
    };
    resolver.resolve4(hostname, done(4));
    resolver.resolve6(hostname, done(6));
  };
}

export interface DialOptions {
  tls?: TlsSettings;
  lookup?: LookupFunction;
}

/**
 * A socket connecting to `address`; ready (for HTTP/2) on the event named by `readyEvent`. Connection errors
 * arrive as the socket's 'error' (see `dialError` for how they read).
 */
export function dial(
  address: H2Address,
  options: DialOptions,
): { socket: Socket; readyEvent: 'connect' | 'secureConnect' } {
  if ('socketPath' in address) return { socket: netConnect(address.socketPath), readyEvent: 'connect' };
  // Every record of a name is tried in turn (happy eyeballs); an IP address is dialled as it is.
  const name = isIP(address.host) === 0;
  const common = {
    host: address.host,
    port: address.port,
    autoSelectFamily: name,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  };
  const tls = options.tls;
  if (!tls) return { socket: netConnect(common), readyEvent: 'connect' };
  const servername = tls.servername ?? (isIP(address.host) ? undefined : address.host);
  const socket = tlsConnect({
    ...common,
    secureContext: tls.secureContext,
    ALPNProtocols: ['h2'],
    ...(servername ? { servername } : {}),
  });
  return { socket, readyEvent: 'secureConnect' };
}

/** An error of a connection attempt as one line; a TLS verification error keeps its OpenSSL code (named in /health). */
export function dialError(
  error: Error & { code?: string; errors?: Error[] },
  tls: boolean,
  connected: boolean,
): string {
  const message = error.errors?.length ? error.errors.map((each) => each.message).join('; ') : error.message;
  if (tls && isTlsError(error)) return `TLS handshake failed: ${error.code ? `${error.code}: ` : ''}${message}`;
  return connected ? `Connection to the node failed: ${message}` : `No connection established: ${message}`;
}

function isTlsError(error: Error & { code?: string }): boolean {
  const code = error.code ?? '';
  return (
    code.startsWith('ERR_TLS') ||
    code.startsWith('ERR_SSL') ||
    /CERT|SELF_SIGNED|UNABLE_TO|VERIFY|ALERT/.test(code) ||
    /ssl|tls|certificate/i.test(error.message)
  );
}
