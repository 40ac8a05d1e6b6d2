// Request headers read from uWS into a plain record (lower-case names).
import type uWS from 'uWebSockets.js';

/**
 * Repeated X-Forwarded-For lines are joined (RFC 9110 §5.3), so a proxy that adds its own line after the
 * client's cannot be outvoted by it; other repeated headers keep the last value.
 */
export function readHeaders(req: uWS.HttpRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  req.forEach((name, value) => {
    headers[name] = name === 'x-forwarded-for' && headers[name] ? `${headers[name]}, ${value}` : value;
  });
  return headers;
}
