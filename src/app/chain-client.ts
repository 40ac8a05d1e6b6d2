// Thread: main
// The chain client the faces share, built by the composition root (server.ts) over the chain node the protocol
// gateway queries (GATEWAY_GRPC_TARGET, or its embedded local query node, whose port exists only once the
// gateway started). Typed queries, so a face needs neither the gateway's .proto loading nor gRPC: the oracle
// reads IidDocuments through it to resolve did:ixo identities, on the main thread (every UCAN check runs there;
// the chat actors never resolve a DID).
import { loadProtoFiles, type protobuf } from '../gateway/proto-root.js';

/** A unary gRPC call to the chain node: full method path, request bytes -> response bytes (the gateway's Upstream). */
export interface ChainQuery {
  call(path: string, request: Uint8Array): Promise<{ bytes: Uint8Array }>;
}

export interface IidDocument {
  id?: string;
  verificationMethod?: { id?: string; type?: string; publicKeyMultibase?: string }[];
  metadata?: { deactivated?: boolean } | null;
}

export interface ChainClient {
  /** The DID's document in the chain's iid module; undefined when the chain has none. Rejects when the chain did not answer. */
  iidDocument(did: string): Promise<IidDocument | undefined>;
}

export const IID_DOCUMENT_METHOD = '/ixo.iid.v1beta1.Query/IidDocument';
const GRPC_NOT_FOUND = 5;

let iidTypes: { request: protobuf.Type; response: protobuf.Type } | undefined;

function types() {
  if (!iidTypes) {
    const root = loadProtoFiles(['ixo/iid/v1beta1/query.proto']);
    iidTypes = {
      request: root.lookupType('ixo.iid.v1beta1.QueryIidDocumentRequest'),
      response: root.lookupType('ixo.iid.v1beta1.QueryIidDocumentResponse'),
    };
  }
  return iidTypes;
}

export function createChainClient(query: ChainQuery): ChainClient {
  return {
    async iidDocument(did) {
      const { request, response } = types();
      let bytes: Uint8Array;
      try {
        ({ bytes } = await query.call(IID_DOCUMENT_METHOD, request.encode(request.create({ id: did })).finish()));
      } catch (error) {
        if ((error as { code?: number }).code === GRPC_NOT_FOUND) return undefined;
        throw error;
      }
      const { iidDocument } = response.toObject(response.decode(bytes), { defaults: false }) as {
        iidDocument?: IidDocument;
      };
      return iidDocument;
    },
  };
}
