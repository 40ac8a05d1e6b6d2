// Thread: main
// Request headers read into a plain record (lower-case names), the same on both engines.
import type uWS from 'uWebSockets.js';

/**
 * Repeated X-Forwarded-For lines are joined (RFC 9110 §5.3), so a proxy that adds its own line after the
 * client's cannot be outvoted by it; other repeated headers keep the last value.
 */
export function readHeaders(req: uWS.HttpRequest): Record<string, string> {
  // Keyed by the client's header names: no prototype, so a header named `constructor` or `__proto__` is data.
  const headers: Record<string, string> = Object.create(null);
  req.forEach((name, value) => {
    addHeader(headers, name, value);
  });
  return headers;
}

/** The same record from node:http's raw list (`[name, value, name, value, ...]`, names as the client sent them). */
export function readRawHeaders(raw: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = Object.create(null);
  for (let i = 0; i < raw.length; i += 2) addHeader(headers, raw[i].toLowerCase(), raw[i + 1]);
  return headers;
}

function addHeader(headers: Record<string, string>, name: string, value: string): void {
  headers[name] = name === 'x-forwarded-for' && headers[name] ? `${headers[name]}, ${value}` : value;
}
