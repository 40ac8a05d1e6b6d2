// Thread: main
// The embedded local query node: a @grpc/grpc-js server on loopback implementing the ixo query services
// over the sample data, plus cosmos.reflection.v1 FileDescriptors, answering with x-cosmos-block-height
// metadata like a chain node. Started when GATEWAY_GRPC_TARGET is not set.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import type { Database } from 'lmdb';
import { fileDescriptorsOf, servicesOf } from '../descriptors.js';
import { serviceDefinitionOf } from '../grpc-service.js';
import { BUNDLED_FILES, loadProtoFiles, protobuf, REFLECTION_FILE } from '../proto-root.js';
import { claimsQueries } from './modules/claims.js';
import { entityQueries } from './modules/entity.js';
import { iidQueries } from './modules/iid.js';
import { tokenQueries } from './modules/token.js';
import { bankQueries } from './modules/bank.js';
import { bondsQueries } from './modules/bonds.js';
import { NodeError, nodeErrors, type Message, type QueryHandler } from './query-handler.js';
import type { LocalNodeFixture } from './records.js';
import { ChainState } from './state.js';

export const DEFAULT_FIXTURE = fileURLToPath(new URL('../../../../fixtures/gateway-local-node.json', import.meta.url));
const HEIGHT_KEY = 'x-cosmos-block-height';
const REFLECTION_SERVICE = 'cosmos.reflection.v1.ReflectionService';

const QUERIES: Record<string, Record<string, QueryHandler>> = {
  'ixo.entity.v1beta1.Query': entityQueries,
  'ixo.claims.v1beta1.Query': claimsQueries,
  'ixo.token.v1beta1.Query': tokenQueries,
  'ixo.iid.v1beta1.Query': iidQueries,
  'ixo.bonds.v1beta1.Query': bondsQueries,
  'cosmos.bank.v1beta1.Query': bankQueries,
};

export interface LocalNodeOptions {
  /** The LMDB database holding the node's records (`gateway-local-node`). */
  db: Database<Uint8Array, string>;
  /** Sample data; default: fixtures/gateway-local-node.json. */
  fixture?: LocalNodeFixture;
  /** Default 127.0.0.1:0 (an ephemeral port). */
  address?: string;
}

export class LocalQueryNode {
  private constructor(
    private readonly server: grpc.Server,
    /** host:port to dial. */
    readonly target: string,
    /** The latest height the node answers for. */
    readonly height: string,
    readonly records: number,
  ) {}

  static async start(options: LocalNodeOptions): Promise<LocalQueryNode> {
    const fixture = options.fixture ?? readFixture(DEFAULT_FIXTURE);
    const root = loadProtoFiles([...BUNDLED_FILES, REFLECTION_FILE]);
    const state = new ChainState(options.db, root);
    const records = state.seed(fixture);
    const height = BigInt(fixture.height);
    const server = new grpc.Server();
    for (const service of servicesOf(root)) {
      const name = service.fullName.slice(1);
      if (name === REFLECTION_SERVICE) continue;
      const handlers = QUERIES[name] ?? {};
      const implementation: grpc.UntypedServiceImplementation = {};
      for (const method of service.methodsArray) {
        const handler = handlers[method.name] ?? withoutData(method);
        implementation[method.name] = unary(height, (request) => handler(request, state));
      }
      server.addService(serviceDefinitionOf(service), implementation);
    }
    addReflection(server, root, height);
    const address = options.address ?? '127.0.0.1:0';
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    const host = address.slice(0, address.lastIndexOf(':'));
    return new LocalQueryNode(server, `${host}:${port}`, String(height), records);
  }

  /** Lets in-flight calls finish (at most `graceMs`), then closes. */
  stop(graceMs = 2000): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.server.forceShutdown();
        resolve();
      }, graceMs);
      this.server.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

export function readFixture(path: string): LocalNodeFixture {
  return JSON.parse(readFileSync(path, 'utf8')) as LocalNodeFixture;
}

/**
 * A query at a height: `x-cosmos-block-height` 0 or absent is the latest; a future height is refused as
 * on a chain node. The node has one version of its data, so any past height answers the same records.
 */
function heightOf(metadata: grpc.Metadata, latest: bigint): string {
  const requested = metadata.get(HEIGHT_KEY)[0];
  if (requested === undefined) return String(latest);
  const text = String(requested);
  if (!/^\d+$/.test(text))
    throw new NodeError(grpc.status.INVALID_ARGUMENT, `invalid height header ${JSON.stringify(text)}`);
  const height = BigInt(text);
  if (height > latest)
    throw new NodeError(
      grpc.status.INVALID_ARGUMENT,
      'cannot query with height in the future; please provide a valid height',
    );
  return String(height === 0n ? latest : height);
}

function unary(latest: bigint, answer: (request: Message) => Message): grpc.handleUnaryCall<Message, Message> {
  return (call, callback) => {
    try {
      const metadata = new grpc.Metadata();
      metadata.set(HEIGHT_KEY, heightOf(call.metadata, latest));
      call.sendMetadata(metadata);
      callback(null, answer(call.request));
    } catch (error) {
      if (error instanceof NodeError) callback({ code: error.code, details: error.message });
      else callback({ code: grpc.status.INTERNAL, details: (error as Error).message });
    }
  };
}

/**
 * A query of a module the sample data has nothing for answers as a node with empty state does: a list
 * is empty, params are the defaults, and a request naming one record (any field besides pagination) is
 * NOT_FOUND.
 */
function withoutData(method: protobuf.Method): QueryHandler {
  method.resolve();
  const keys = method.resolvedRequestType!.fieldsArray.filter((field) => field.name !== 'pagination');
  const list = method.resolvedResponseType!.fieldsArray.some((field) => field.repeated);
  if (list || keys.length === 0) return () => ({});
  return (request) => {
    throw nodeErrors.notFound(method.name, keys.map((field) => String(request[field.name] ?? '')).join('/'));
  };
}

/** cosmos.reflection.v1.ReflectionService/FileDescriptors: every file of the node, with its http options. */
function addReflection(server: grpc.Server, root: protobuf.Root, latest: bigint): void {
  // Built on the first call: start-up does not pay for it unless the gateway reads the descriptors.
  let response: Buffer | undefined;
  const files = () => {
    if (!response) {
      const writer = protobuf.Writer.create();
      for (const file of fileDescriptorsOf(root)) writer.uint32(10).bytes(file); // FileDescriptorsResponse.files = 1
      response = Buffer.from(writer.finish());
    }
    return response;
  };
  const definition = serviceDefinitionOf(root.lookupService(REFLECTION_SERVICE));
  const method = definition.FileDescriptors;
  server.addService(
    { FileDescriptors: { ...method, responseSerialize: (bytes: Buffer) => bytes } },
    { FileDescriptors: unary(latest, () => files() as unknown as Message) },
  );
}
