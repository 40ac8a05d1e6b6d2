// Operator-only routes: with OPERATOR_TOKEN set they need `Authorization: Bearer <token>`;
// without it only loopback callers are served.
import { timingSafeEqual, createHash } from 'node:crypto';
import { isLoopback } from './client-address.js';
import { HttpError } from './errors.js';
import type { HttpRequest } from './types.js';

export type OperatorGuard = (req: HttpRequest) => void;

export function createOperatorGuard(token: string | undefined): OperatorGuard {
  if (!token) {
    return function loopbackOnly(req) {
      if (!isLoopback(req.ip)) {
        throw HttpError.of(403, 'Operator routes are served to loopback callers only (set OPERATOR_TOKEN to allow remote operators)');
      }
    };
  }
  const expected = createHash('sha256').update(token).digest();
  return function bearerToken(req) {
    const header = req.headers.authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7) : '';
    // Compare digests so the comparison takes the same time whatever the length of the given token.
    if (!given || !timingSafeEqual(createHash('sha256').update(given).digest(), expected)) {
      throw HttpError.of(401, 'Operator token required: Authorization: Bearer <OPERATOR_TOKEN>', undefined, {
        'WWW-Authenticate': 'Bearer',
      });
    }
  };
}
