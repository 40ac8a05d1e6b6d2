// Thread: any
// A face is one of the server's three faces (USSD, oracle, protocol gateway): it contributes routes,
// may start and stop resources, and may add fields to the health record. src/app/server.ts composes them.
import type { ClusterConnection } from '../cluster/connection.js';
import type { ClusterEventBus } from '../cluster/event-bus.js';
import type { InheritedActors } from '../cluster/node.js';
import type { Config } from './config.js';
import type { Router } from '../http/router.js';
import type { SocketFrontDoor } from '../http/websocket.js';
import type { Logger } from '../base/log.js';
import type { Records } from './records.js';
import type { Actors } from '../runtime/router.js';
import type { CpuPool } from '../runtime/cpu-pool.js';
import type { Store } from '../store/env.js';

/** What a face is given; `C` the slice of the configuration it may read (its own variables and the server's). */
export interface FaceContext<C = Config> {
  readonly config: C;
  readonly store: Store;
  /** The faces' record families, on the engine the composition root picked (records.ts). */
  readonly records: Records;
  readonly log: Logger;
  /** The session actors: this node's runtime, or in cluster mode the router to whichever node runs each one. */
  readonly actors: Actors;
  /** piscina pool for CPU work (UCAN verification, key derivation). */
  readonly cpuPool: CpuPool;
  /** Cluster mode (NATS_URL): this node's NATS connection, for the faces' repositories; undefined on one node. */
  readonly cluster?: ClusterConnection;
  /** Cluster mode: the actors' events across nodes, told which sessions have sockets on this node. */
  readonly events?: ClusterEventBus;
  /** Cluster mode: the actors this node takes on when their node dies (a face resumes the work they left). */
  readonly inherited?: InheritedActors;
}

export interface Face {
  readonly name: string;
  /** Called once before routes are registered (open channels, start embedded services, load descriptors). */
  start?(): Promise<void>;
  /** Registers the face's routes. */
  routes(router: Router): void;
  /** Called once before the front door listens, for faces that accept WebSockets (routes on the same app). */
  sockets?(front: SocketFrontDoor): void;
  /** OpenAPI paths and component schemas for routes not described through the Router's docs. */
  openApi?(): { paths: Record<string, unknown>; schemas?: Record<string, unknown> };
  /** Fields the face adds to GET /health (the gateway: its chain node connection). */
  health?(): Record<string, unknown>;
  /** Called on shutdown after the HTTP server stopped accepting and drained. */
  stop?(): Promise<void>;
}

export type FaceFactory<C = Config> = (context: FaceContext<C>) => Face | Promise<Face>;
