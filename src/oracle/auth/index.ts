// Thread: main
// UCAN authentication of the oracle face. Routes and the WebSocket channel use `UcanAuthenticator`;
// build it once at start-up with `createOracleAuthenticator`.
import type { OracleIdentity } from '../identity/identity.js';
import { UcanAuthenticator, type AuthenticatorOptions } from './authenticator.js';
import type { DidResolvers } from './did.js';
import { inProcessVerifier, poolVerifier, type TaskRunner } from './verifier.js';

export {
  createAuthenticator,
  MAX_CACHE_SECONDS,
  UcanAuthenticator,
  verifyDelegationForStorage,
  type AuthenticatorOptions,
  type AuthIdentity,
  type StoredDelegationCheck,
  type UcanArtifacts,
} from './authenticator.js';
export { decodeArtifact } from './artifact.js';
export { revocationKey, revocationKeyOf } from './revocation-key.js';
export { didKeyOf, didKeyPublicKey, ixoResolverUnavailable, type DidResolver, type DidResolvers } from './did.js';
export { verifyEd25519 } from './ed25519.js';
export { AuthFailure } from './failure.js';
export { ORACLE_RESOURCE, OracleAccess } from './invocation.js';
export { authErrors, INVALID_DELEGATION_MESSAGE, INVALID_UCAN_MESSAGE, MISSING_UCAN_MESSAGE } from './messages.js';
export {
  inProcessVerifier,
  poolVerifier,
  VERIFY_TASK,
  type SignatureCheck,
  type SignatureVerifier,
  type TaskRunner,
} from './verifier.js';

/** The oracle's authenticator: audience = the identity's DID, Ed25519 checks in `cpuPool` when given. */
export function createOracleAuthenticator(
  identity: OracleIdentity,
  options: {
    maxTtlSeconds: number;
    cpuPool?: TaskRunner;
    resolvers?: DidResolvers;
    cacheSize?: number;
    revocations?: AuthenticatorOptions['revocations'];
  },
): UcanAuthenticator {
  return new UcanAuthenticator({
    oracleDid: identity.did,
    oracleKeyDid: identity.keyDid,
    maxTtlSeconds: options.maxTtlSeconds,
    verifier: options.cpuPool ? poolVerifier(options.cpuPool) : inProcessVerifier(),
    resolvers: options.resolvers,
    cacheSize: options.cacheSize,
    revocations: options.revocations,
  });
}
