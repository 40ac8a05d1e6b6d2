// Thread: main
// What `npm start` prints for a person once the server listens (besides the JSON log): where to go and what to
// try first. Kept apart from the log so the log stays one JSON record per line.
import type { Config } from './config.js';
import type { Face } from './face.js';
import { playgroundEnabled } from '../playground/config.js';

interface Started {
  readonly port: number;
  readonly config: Pick<Config, 'HOST' | 'NODE_ENV' | 'PLAYGROUND_ENABLED' | 'GATEWAY_PREFIX'>;
  readonly faces: readonly Face[];
}

/** A face that carries the oracle's identity (the oracle face), found by what it has rather than by its name. */
function oracleDidOf(faces: readonly Face[]): string | undefined {
  for (const face of faces) {
    if ('identity' in face) {
      const identity = (face as { identity?: { did?: unknown } }).identity;
      if (typeof identity?.did === 'string') return identity.did;
    }
  }
  return undefined;
}

/** A browser cannot open 0.0.0.0 or :: as a page address, and WebCrypto needs a secure origin: use loopback. */
function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '' || host === '::' || host === '[::]') return '127.0.0.1';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The lines `npm start` prints once the server listens. */
export function startBanner(server: Started): string[] {
  const base = `http://${displayHost(server.config.HOST)}:${server.port}`;
  const did = oracleDidOf(server.faces);
  const lines = [`listening on ${base} (bound to ${server.config.HOST}:${server.port})`];
  if (playgroundEnabled(server.config)) lines.push(`  playground  ${base}/playground`);
  lines.push(`  API docs    ${base}/docs`, `  health      ${base}/health`);
  if (did) lines.push(`  oracle DID  ${did}`);
  lines.push(`  try USSD    npm run ussd -- --url ${base}/api/ussd`);
  return lines;
}
