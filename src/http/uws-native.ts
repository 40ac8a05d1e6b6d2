// Thread: main
// Which native uWebSockets.js build this process can load, tried in order of preference:
//  1. the official release (v20.57, Node 20-25; its Linux binaries need glibc >= 2.38: Debian 13, Ubuntu 24.04),
//     from the optional dependency @btc-vision/uwebsockets.js, a republish of upstream's release binaries;
//  2. the trufflesuite build (v20.30, Node 16/18/20 only; built against an older glibc);
//  3. none: the portable engine (node:http) serves, and the reason is kept for the start-up warning.
// Loaded lazily and once: the portable engine never loads a native build at all.
import { createRequire } from 'node:module';
import type uWSModule from 'uWebSockets.js';

export type UwsModule = typeof uWSModule;

// Both builds have an exclusive listen (no SO_REUSEPORT), which their typings leave out.
declare module 'uWebSockets.js' {
  export const LIBUS_LISTEN_EXCLUSIVE_PORT: number;
  interface TemplatedApp {
    listen(
      host: RecognizedString,
      port: number,
      options: number,
      cb: (listenSocket: us_listen_socket | false) => void,
    ): TemplatedApp;
  }
}

export type UwsBuild = 'official' | 'trufflesuite';

export type NativeUws =
  | { module: UwsModule; build: UwsBuild; version: string }
  | { module?: undefined; reason: string };

const require = createRequire(import.meta.url);

/** This platform's binary in the trufflesuite package (what its loader, src/uws.js, would require). */
const TRUFFLESUITE_BINARY = `uWebSockets.js/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;

const CANDIDATES: readonly { build: UwsBuild; specifier: string; version: string }[] = [
  { build: 'official', specifier: '@btc-vision/uwebsockets.js', version: '20.57.0' },
  // The binary itself, not the package: its loader prints "Falling back to a NodeJS implementation" to stderr
  // where it has no binary (Node 22, 24) and returns a shim; the reason is in our own start-up warning instead.
  { build: 'trufflesuite', specifier: TRUFFLESUITE_BINARY, version: '20.30.0' },
];

let loaded: NativeUws | undefined;

/** The first native build that loads here, or why none did. */
export function loadNativeUws(): NativeUws {
  return (loaded ??= tryCandidates());
}

function tryCandidates(): NativeUws {
  const reasons: string[] = [];
  for (const candidate of CANDIDATES) {
    try {
      const module = require(candidate.specifier) as UwsModule;
      // The trufflesuite package falls back to a JavaScript shim without its native helpers (and which fails on
      // the first request) when it has no binary for this Node.js: that is not a native build.
      if (typeof (module as unknown as { getParts?: unknown }).getParts !== 'function') {
        reasons.push(
          `${candidate.build}: no binary for Node.js ${process.versions.node} (ABI ${process.versions.modules})`,
        );
        continue;
      }
      return { module, build: candidate.build, version: candidate.version };
    } catch (error) {
      const missing =
        (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && candidate.build === 'trufflesuite';
      reasons.push(
        `${candidate.build}: ${missing ? `no binary for Node.js ${process.versions.node} (ABI ${process.versions.modules})` : firstLine(error)}`,
      );
    }
  }
  return { reason: reasons.join('; ') };
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  // The official loader wraps the dlopen error after a sentence of its own: the dlopen part names the cause.
  const glibc = /version `(GLIBC_[\d.]+)' not found/.exec(text);
  if (glibc) return `this system's glibc is older than its binary needs (${glibc[1]} not found)`;
  const lines = text
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  return (
    lines.find((line) => /cannot open shared object|Cannot find module/.test(line)) ??
    lines[0] ??
    'unknown'
  ).slice(0, 200);
}
