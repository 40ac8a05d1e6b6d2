// Thread: main (front door)
// Every error answer of the live-call routes in one table, with its meaning (docs/errors.md, `npm run docs:errors`).
import { HttpError } from '../../http/errors.js';
import { CALL_NOT_FOUND, type CallRefusal } from './lifecycle.js';

export const LIVE_AGENT_KEY_OFF = 'Live-agent access is off: LIVE_AGENT_AUTH_API_KEY is not set';

export const callErrors = {
  /** GET /calls/:callId/key while LIVE_AGENT_AUTH_API_KEY is not set: the route serves no one. */
  keyOff: () => HttpError.of(403, LIVE_AGENT_KEY_OFF),
  missingKey: () => HttpError.of(401, 'Missing API key: send it in the x-api-key header'),
  invalidKey: () => HttpError.of(401, 'Invalid API key'),
  callNotFound: () => HttpError.of(404, CALL_NOT_FOUND),
  noEncryptionKey: () => HttpError.of(404, 'This call was synced without an encryption key'),
  /** A sync or update the call's lifecycle refuses (lifecycle.ts), with its status and message. */
  refused: (refusal: CallRefusal) => HttpError.of(refusal.status, refusal.message),
};

export const CALL_ERROR_MEANINGS: { readonly [K in keyof typeof callErrors]: string } = {
  keyOff: 'LIVE_AGENT_AUTH_API_KEY is not set: the live agent key route serves no one',
  missingKey: 'The live agent key route without an `x-api-key` header',
  invalidKey: 'The live agent key route with another key',
  callNotFound: "No such call, or another user's",
  noEncryptionKey: 'The call was synced without an encryption key',
  refused: "A sync or update the call's lifecycle refuses; its status says how (below)",
};

/** What each status of a lifecycle refusal means (CallRefusal). */
export const CALL_REFUSAL_MEANINGS: { readonly [S in CallRefusal['status']]: string } = {
  400: 'A timestamp the call status does not allow (callStartedAt on a pending call, callEndedAt before its start)',
  404: "No such call, or another user's",
  409: "Another user's call id, a field that differs from the synced call's, a status that cannot follow, or too many calls",
};
