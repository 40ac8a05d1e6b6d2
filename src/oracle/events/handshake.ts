// Thread: main
// The event channel's handshake, the same for both transports: a `sessionId` (query), UCAN artifacts as on
// HTTP (headers, for non-browser clients) or as handshake values (query `invocation` / `ucanDelegation` on
// the native socket, `auth: { invocation, ucanDelegation }` on Socket.IO), validated by the authenticator the
// HTTP routes use. The identity is the validated issuer; the session must be the user's. Refusals are the
// HTTP errors of the routes (400, 401, 404) so both transports can report them.
import { httpErrors } from '../../http/errors.js';
import { artifactsFromHeaders, type UcanAuthenticator } from '../auth/authenticator.js';
import { chatFailure, oracleErrors } from '../errors.js';
import type { SessionReads } from '../routes/session-reads.js';

export interface ChannelIdentity {
  readonly sessionId: string;
  readonly userDid: string;
  /** Revocation keys of the credential the socket authenticated with and of its proofs: revoking one closes the socket. */
  readonly chain: readonly string[];
  /**
   * Seconds since the epoch when the authority behind the credential ends (AuthIdentity.authorityExpiration): the
   * socket closes then; undefined: never. A socket opened with a delegation alone is checked at the handshake
   * only, as the reference gateway does (client SDK 1.4.0 never reconnects): it stays open past the delegation's
   * expiry and closes on its revocation.
   */
  readonly expiration: number | undefined;
}

export interface HandshakeInput {
  sessionId?: unknown;
  invocation?: unknown;
  ucanDelegation?: unknown;
  /** Lower-case header names. */
  headers: Readonly<Record<string, string | undefined>>;
}

export interface HandshakeDeps {
  readonly authenticator: UcanAuthenticator;
  /** Whose session it is, asked of the session's actor. */
  readonly sessions: SessionReads;
}

const SESSION_ID_MAX = 128;
export const MISSING_SESSION_ID = 'The sessionId query parameter is required';

/** A handshake value: base64 sent unencoded in a query has its `+` turned into spaces; base64 has no spaces. */
function artifact(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim().replace(/ /g, '+');
  return text || undefined;
}

/**
 * A copy of `text` that refers to no other string. A value parsed out of the handshake's query is a slice of
 * the whole query, invocation included (~600 bytes), and a slice keeps the string it was cut from alive: kept
 * as the socket's session id for its lifetime, it held the whole query per idle socket.
 */
const ownCopy = (text: string) => Buffer.from(text, 'utf8').toString('utf8');

export async function authenticateHandshake(deps: HandshakeDeps, input: HandshakeInput): Promise<ChannelIdentity> {
  const sessionId = typeof input.sessionId === 'string' ? ownCopy(input.sessionId.trim()) : '';
  if (!sessionId) throw httpErrors.badRequest(MISSING_SESSION_ID);
  if (sessionId.length > SESSION_ID_MAX)
    throw httpErrors.badRequest(`sessionId must be at most ${SESSION_ID_MAX} characters`);
  const headers = artifactsFromHeaders(input.headers);
  const identity = await deps.authenticator.authenticateArtifacts({
    invocation: headers.invocation ?? artifact(input.invocation),
    delegation: headers.delegation ?? artifact(input.ucanDelegation),
  });
  const owned = await deps.sessions.owns(sessionId, identity.did).catch((error: unknown) => {
    throw chatFailure(error);
  });
  if (!owned) throw oracleErrors.sessionNotFound();
  const expiration = identity.via === 'delegation' ? undefined : identity.authorityExpiration;
  return { sessionId, userDid: identity.did, chain: identity.chain, expiration };
}
