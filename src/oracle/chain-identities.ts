// did:ixo identities resolve through the chain node the protocol gateway queries: GATEWAY_GRPC_TARGET, or
// the embedded local query node, whose port exists only after the gateway face started. So the link is
// made by the composition root once every face started, and only on the main thread: every UCAN check
// (HTTP routes, the WebSocket handshake, POST /delegation) runs there, in the oracle's one authenticator.
// The chat actors on the worker threads never resolve a DID: minting only names the audience, and the
// user's delegation was verified when it was stored.
import type { Face } from '../face.js';
import type { UcanAuthenticator } from './auth/authenticator.js';
import { createIxoDidResolver, type ChainQuery, type IxoResolverOptions } from './auth/ixo-resolver.js';

interface WithAuthenticator extends Face {
  readonly authenticator: UcanAuthenticator;
}

interface WithChain extends Face {
  readonly upstream: ChainQuery | undefined;
}

/** Plugs the chain's iid module into the oracle's authenticator; false when either face is missing. */
export function linkChainIdentities(faces: readonly Face[], options?: IxoResolverOptions): boolean {
  const oracle = faces.find((face): face is WithAuthenticator => face.name === 'oracle' && 'authenticator' in face);
  const chain = faces.find((face): face is WithChain => 'upstream' in face)?.upstream;
  if (!oracle || !chain) return false;
  oracle.authenticator.setDidResolver('ixo', createIxoDidResolver(chain, options));
  return true;
}
