// Thread: main
// How protected routes authenticate, as OpenAPI security schemes (see the oracle wire-format reference).
import type { RouteAuth } from '../http/route.js';
export const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'UCAN',
    description:
      'A user-signed UCAN invocation for this oracle (padded base64 of a ucanto CAR archive). ' +
      'Read only together with the header `X-Auth-Type: ucan`; its expiration must be set and at most ' +
      'UCAN_AUTH_MAX_TTL_SECONDS away.',
  },
  ucanAuthType: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Auth-Type',
    description: 'Must be `ucan`: without it the bearer token is ignored.',
  },
  ucanDelegation: {
    type: 'apiKey',
    in: 'header',
    name: 'x-ucan-delegation',
    description:
      'Fallback: the user-to-oracle UCAN delegation alone (audience = this oracle, not expired along the chain). ' +
      'Also carries the capabilities plugins use for downstream invocations.',
  },
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description:
      'The gateway: one of GATEWAY_API_KEYS (only when it is gated). GET /calls/{callId}/key: LIVE_AGENT_AUTH_API_KEY.',
  },
  operatorToken: {
    type: 'http',
    scheme: 'bearer',
    description:
      'OPERATOR_TOKEN. Without OPERATOR_TOKEN configured, operator routes serve loopback callers only, and no one behind a trusted proxy.',
  },
} as const;

/** Invocation (bearer + X-Auth-Type together) or, failing that, the delegation header. */
export const UCAN_SECURITY = [{ bearerAuth: [], ucanAuthType: [] }, { ucanDelegation: [] }];
export const OPERATOR_SECURITY = [{ operatorToken: [] }];

/** The security requirement of each kind of route auth (http/route.ts). */
export const SECURITY_OF = {
  public: [],
  ucan: UCAN_SECURITY,
  operator: OPERATOR_SECURITY,
  'api-key': [{ apiKey: [] }],
} as const satisfies Record<RouteAuth, readonly object[]>;
