// Thread: main
// Operator-only routes: with OPERATOR_TOKEN set they need `Authorization: Bearer <token>`; without it only
// loopback callers are served, and only when no proxy is trusted. Behind a proxy every request's peer may be the
// proxy (loopback on the same host) and forwarded addresses are client-written, so neither can prove an operator.
import { timingSafeEqual, createHash } from 'node:crypto';
import { isLoopback } from './client-address.js';
import { HttpError } from './errors.js';
import type { HttpRequest } from './types.js';

export type OperatorGuard = (req: HttpRequest) => void;

export const OPERATOR_TOKEN_REQUIRED_BEHIND_PROXY =
  'Operator routes are disabled: a trusted proxy is configured (TRUST_PROXY_ENABLED, TRUST_PROXY_HOPS or TRUSTED_PROXIES), so set OPERATOR_TOKEN to use them';

/** Every answer of the guard, and its meaning (docs/errors.md, `npm run docs:errors`). */
export const operatorErrors = {
  behindProxy: () => HttpError.of(403, OPERATOR_TOKEN_REQUIRED_BEHIND_PROXY),
  notLoopback: () =>
    HttpError.of(
      403,
      'Operator routes are served to loopback callers only (set OPERATOR_TOKEN to allow remote operators)',
    ),
  tokenRequired: () =>
    HttpError.of(401, 'Operator token required: Authorization: Bearer <OPERATOR_TOKEN>', undefined, {
      'WWW-Authenticate': 'Bearer',
    }),
};

export const OPERATOR_ERROR_MEANINGS: { readonly [K in keyof typeof operatorErrors]: string } = {
  behindProxy: 'An operator route, a trusted proxy configured and no OPERATOR_TOKEN: served to no one',
  notLoopback: 'An operator route from a remote address while OPERATOR_TOKEN is not set',
  tokenRequired: 'An operator route without `Authorization: Bearer <OPERATOR_TOKEN>`, or with another token',
};

export function createOperatorGuard(token: string | undefined, behindProxy: boolean): OperatorGuard {
  if (!token && behindProxy) {
    return function refused() {
      throw operatorErrors.behindProxy();
    };
  }
  if (!token) {
    return function loopbackOnly(req) {
      if (!isLoopback(req.ip)) {
        throw operatorErrors.notLoopback();
      }
    };
  }
  const expected = createHash('sha256').update(token).digest();
  return function bearerToken(req) {
    const header = req.headers.authorization ?? '';
    const given = header.startsWith('Bearer ') ? header.slice(7) : '';
    // Compare digests so the comparison takes the same time whatever the length of the given token.
    if (!given || !timingSafeEqual(createHash('sha256').update(given).digest(), expected)) {
      throw operatorErrors.tokenRequired();
    }
  };
}
