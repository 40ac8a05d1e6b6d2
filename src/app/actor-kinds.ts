// Thread: actor host
// The actor kinds every actor host can run, one per face that keeps sessions, and what their hosts give them.
import type { RestQuery } from '../base/chain-rest.js';
import type { ClusterConnection } from '../cluster/connection.js';
import type { Config } from './config.js';
import type { Records } from './records.js';
import type { ActorKind } from '../runtime/actor-host.js';
import { chatActorKind } from '../oracle/actor/chat-actor.js';
import { ussdActorKind } from '../ussd/actor/session-actor.js';

export const actorKinds: readonly ActorKind[] = [ussdActorKind, chatActorKind];

// The runtime's HostContext knows no face and no cluster; the kinds of this program read these from it
// (workers/actor-host.ts fills them in).
declare module '../runtime/actor-host.js' {
  interface HostContext {
    readonly config: Config;
    /** The faces' record families, on the engine this host's composition picked (records.ts). */
    readonly records: Records;
    /** Cluster mode (NATS_URL): this host's own NATS connection (a connection cannot cross threads); undefined on one node. */
    readonly cluster?: ClusterConnection;
    /** A Cosmos REST path answered in process by the main thread's gateway face (the USSD `query` action). */
    readonly chainRest?: RestQuery;
  }
}
