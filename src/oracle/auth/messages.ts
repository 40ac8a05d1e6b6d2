// Thread: main
// The two 401 answers of the wire format (reference: oracle-wire-format.md, Authentication), and the 503 of a
// revocation list that cannot be read now (cluster mode, NATS out of reach).
import { HttpError } from '../../http/errors.js';

export const MISSING_UCAN_MESSAGE =
  'Missing UCAN authentication: provide Authorization: Bearer <invocation> with X-Auth-Type: ucan, or an x-ucan-delegation header';
export const INVALID_UCAN_MESSAGE = 'Invalid UCAN invocation';
/** A delegation authenticating alone (`x-ucan-delegation`, a socket's `ucanDelegation`) is named as what it is. */
export const INVALID_DELEGATION_MESSAGE = 'Invalid UCAN delegation';

export const authErrors = {
  missing: () => HttpError.of(401, MISSING_UCAN_MESSAGE),
  /** The message stays exactly the reference text; `reason` tells the client what was wrong. */
  invalid: (reason: string) => HttpError.of(401, INVALID_UCAN_MESSAGE, { reason }),
  invalidDelegation: (reason: string) => HttpError.of(401, INVALID_DELEGATION_MESSAGE, { reason }),
  /** Nothing was decided about the credential: neither refused nor let in unchecked. */
  revocationsUnavailable: () =>
    HttpError.of(503, 'The revocation list cannot be read right now; try again in a moment', undefined, {
      'Retry-After': '1',
    }),
};

/** Each of authErrors in one line, for docs/errors.md (`npm run docs:errors`). */
export const AUTH_ERROR_MEANINGS: { readonly [K in keyof typeof authErrors]: string } = {
  missing: 'No UCAN invocation nor delegation on a route that needs one',
  invalid: 'The UCAN invocation was refused (signature, expiry, audience, capability, revocation); see `reason`',
  invalidDelegation: 'The delegation authenticating alone was refused; see `reason`',
  revocationsUnavailable: 'The revocation list cannot be read now (cluster, NATS out of reach): nothing was decided',
};
