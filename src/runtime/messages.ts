// Everything that crosses between the main thread and an actor host, typed in one place.
import type { MessagePort } from 'node:worker_threads';
import type { Config } from '../config.js';

/** workerData of an actor host. */
export interface HostInit {
  hostIndex: number;
  config: Config;
  /** Port on which the host publishes actor events (fan-out to sockets on the main thread). */
  eventPort: MessagePort;
  /** Port on which the host posts its metrics reports (src/metrics/host-report.ts); absent with METRICS_ENABLED=false. */
  metricsPort?: MessagePort;
}

/** An event an actor publishes to every socket subscribed to `topic` (for example a chat session). */
export interface ActorEvent {
  topic: string;
  event: string;
  data: unknown;
}

/** The comlink API of an actor host. */
export interface HostApi {
  /** Delivers `message` to the actor's mailbox and resolves with its reply. */
  send(kind: string, actorId: string, message: unknown): Promise<unknown>;
  /** Like send, but the actor writes a stream of frames to `port` and closes it when done. */
  stream(kind: string, actorId: string, message: unknown, port: MessagePort): Promise<void>;
  /** Bypasses the mailbox: for signals that must reach a busy actor (abort). */
  signal(kind: string, actorId: string, message: unknown): Promise<unknown>;
  stats(): { actors: number; hostIndex: number };
}
