// Thread: main
// The protocol query gateway face: HTTP GET -> gRPC query of a Cosmos chain node -> Cosmos REST JSON.
// Routes come from the google.api.http annotations of the node's own descriptors (cosmos.reflection.v1)
// and of the bundled .proto files for what the node does not describe (GATEWAY_DESCRIPTORS). Without
// GATEWAY_GRPC_TARGET an embedded query node over sample data is the upstream.
import { status as GrpcStatus } from '@grpc/grpc-js';
import type { RestAnswer } from '../base/chain-rest.js';
import type { GatewayConfig } from '../app/config.js';
import type { Face, FaceContext } from '../app/face.js';
import type { Router } from '../http/router.js';
import { CosmosJson } from './cosmos-json.js';
import { bundledSchema, withFallback, type GatewaySchema } from './descriptors.js';
import { createKeyGate } from './gate.js';
import { createGatewayHandler } from './handler.js';
import { LocalQueryNode } from './local-node/server.js';
import { gatewayOpenApi } from './openapi.js';
import { queryInProcess } from './query.js';
import { reflectedSchema } from './reflection-client.js';
import { RouteTable } from './route-table.js';
import { Upstream } from './upstream.js';

export class GatewayFace implements Face {
  readonly name = 'gateway';
  #node?: LocalQueryNode;
  #upstream?: Upstream;
  #table?: RouteTable;
  #json?: CosmosJson;

  constructor(private readonly context: FaceContext<GatewayConfig>) {}

  async start(): Promise<void> {
    const { config, store, log } = this.context;
    let target = config.GATEWAY_GRPC_TARGET;
    if (!target) {
      this.#node = await LocalQueryNode.start({ db: store.db<Uint8Array>('gateway-local-node') });
      target = this.#node.target;
      log.info(
        { target, height: this.#node.height, records: this.#node.records },
        'gateway: embedded local query node started (GATEWAY_GRPC_TARGET is not set)',
      );
    }
    this.#upstream = this.#connect(target);
    let schema: GatewaySchema;
    try {
      schema = await this.#schema(this.#upstream);
    } catch (error) {
      await this.stop();
      throw error;
    }
    this.#table = RouteTable.build(schema, { legacy: config.GATEWAY_LEGACY_ROUTES, log });
    this.#json = new CosmosJson(schema.root, ...(schema.roots ?? []));
    log.info(
      {
        target,
        descriptors: config.GATEWAY_DESCRIPTORS,
        routes: this.#table.routes.length,
        prefix: config.GATEWAY_PREFIX || '/',
      },
      'gateway: routes generated',
    );
  }

  /** The node's client; each change of its connection state is logged once (a TLS error by its name). */
  #connect(target: string): Upstream {
    const { config, log } = this.context;
    const upstream = new Upstream(target, {
      timeoutMs: config.GATEWAY_TIMEOUT_MS,
      maxResponseBytes: config.GATEWAY_MAX_RESPONSE_BYTES,
      keepaliveMs: config.GATEWAY_KEEPALIVE_MS,
      tls: {
        caFile: config.GATEWAY_GRPC_CA_FILE,
        certFile: config.GATEWAY_GRPC_CERT_FILE,
        keyFile: config.GATEWAY_GRPC_KEY_FILE,
      },
      onState: (state) => {
        if (state.state === 'failing')
          log.warn({ target, address: state.address, error: state.error }, 'gateway: cannot reach the chain node');
        else if (state.state === 'ready')
          log.info({ target, address: state.address }, 'gateway: connected to the chain node');
      },
    });
    if (!upstream.tls && (config.GATEWAY_GRPC_CA_FILE || config.GATEWAY_GRPC_CERT_FILE)) {
      log.warn(
        { target },
        'gateway: GATEWAY_GRPC_CA_FILE/CERT_FILE are set but the target is not TLS (write it as grpcs://host:port); they are not used',
      );
    }
    return upstream;
  }

  /** What /health shows of the chain node connection (none for the embedded node: it is this process). */
  health(): Record<string, unknown> {
    const upstream = this.#upstream;
    if (!upstream || this.#node) return {};
    const { state, address, error, keepaliveMs } = upstream.state;
    return {
      gateway: { upstream: { target: upstream.target, tls: upstream.tls, state, address, error, keepaliveMs } },
    };
  }

  /** GATEWAY_DESCRIPTORS: auto prefers a real node's descriptors and fills in from the bundled files. */
  async #schema(upstream: Upstream): Promise<GatewaySchema> {
    const { config, log } = this.context;
    const mode = config.GATEWAY_DESCRIPTORS;
    if (mode === 'reflection') return reflectedSchema(upstream);
    if (mode === 'bundled' || this.#node) return bundledSchema();
    let reflected: GatewaySchema;
    try {
      reflected = await reflectedSchema(upstream);
    } catch (error) {
      // Only a node that answered UNIMPLEMENTED has no reflection; any other failure is told as it is.
      const unimplemented = (error as { code?: number }).code === GrpcStatus.UNIMPLEMENTED;
      const message = unimplemented
        ? 'gateway: the node has no descriptors to read; all routes come from the bundled .proto files'
        : "gateway: could not read the node's descriptors; all routes come from the bundled .proto files";
      log.warn({ target: upstream.target, error: (error as Error).message }, message);
      return bundledSchema();
    }
    const { schema, fallbackServices } = withFallback(reflected, bundledSchema());
    const services = (methods: GatewaySchema['methods']) => [
      ...new Set(methods.map((method) => method.service.fullName.slice(1))),
    ];
    log.info(
      { fromNode: services(reflected.methods), fromBundled: fallbackServices },
      "gateway: routes from the node's descriptors, and from the bundled .proto files for the services it does not describe",
    );
    return schema;
  }

  /** The chain node's gRPC client once started (the oracle resolves did:ixo identities through it). */
  get upstream(): Upstream | undefined {
    return this.#upstream;
  }

  /**
   * A Cosmos REST path (with its query string) answered in process, as its GET would be, within `timeoutMs`: the
   * USSD `query` action's way to the chain (src/base/chain-rest.ts). Before start() finished: 503, code UNAVAILABLE.
   */
  query(pathAndQuery: string, timeoutMs: number): Promise<RestAnswer> {
    if (!this.#table || !this.#upstream || !this.#json) return Promise.resolve(notStarted());
    return queryInProcess({ table: this.#table, upstream: this.#upstream, json: this.#json }, pathAndQuery, timeoutMs);
  }

  routes(router: Router): void {
    if (!this.#table || !this.#upstream || !this.#json) throw new Error('gateway: start() must finish before routes()');
    const prefix = this.context.config.GATEWAY_PREFIX;
    const handler = createGatewayHandler({
      table: this.#table,
      upstream: this.#upstream,
      json: this.#json,
      prefix,
      gate: createKeyGate(this.context.config.GATEWAY_API_KEYS),
    });
    // One wildcard per first path segment; the route table matches the templates itself (first declared
    // wins). Under a prefix, everything else gets the gateway's own 404 too.
    const docs = { hidden: true, summary: 'Protocol query gateway (operations listed from the descriptors)' };
    const patterns = new Set<string>(prefix ? [`${prefix}/*`] : []);
    for (const segment of this.#table.firstSegments) {
      const base = segment ? `${prefix}/${segment}` : prefix;
      if (base) patterns.add(base);
      patterns.add(`${base}/*`);
    }
    for (const pattern of patterns) router.get(pattern, handler, docs);
  }

  openApi() {
    // Its routes are generated from the chain's descriptors at start-up, not declared in code (see http/route.ts):
    // one hidden catch-all serves them, and the gate applies to all of them alike.
    const auth = this.context.config.GATEWAY_API_KEYS.length > 0 ? 'api-key' : 'public';
    return gatewayOpenApi(this.#table?.routes ?? [], this.context.config.GATEWAY_PREFIX, auth);
  }

  async stop(): Promise<void> {
    this.#upstream?.close();
    this.#upstream = undefined;
    await this.#node?.stop();
    this.#node = undefined;
  }
}

/** The in-process answer while the gateway is not started (or stopped): 503, code UNAVAILABLE. */
export const notStarted = (): RestAnswer => ({
  status: 503,
  body: JSON.stringify({ code: GrpcStatus.UNAVAILABLE, message: 'the gateway is not started', details: [] }),
});

export const createGatewayFace = (context: FaceContext<GatewayConfig>): GatewayFace => new GatewayFace(context);
