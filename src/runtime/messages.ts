// Thread: any
// Everything that crosses between the main thread and an actor host, typed in one place.
import type { MessagePort } from 'node:worker_threads';
import type { RuntimeConfig } from './config.js';

/** workerData of an actor host. */
export interface HostInit {
  hostIndex: number;
  /** The whole configuration; the runtime reads only its own slice. */
  config: RuntimeConfig;
  /** Port on which the host answers the main thread's calls (rpc.ts over a batching endpoint). */
  rpcPort: MessagePort;
  /** Port on which the host publishes actor events (fan-out to sockets on the main thread). */
  eventPort: MessagePort;
  /** Port on which the host posts its metrics reports (src/metrics/host-report.ts); absent with METRICS_ENABLED=false. */
  metricsPort?: MessagePort;
  /** Port on which the host calls what the main thread serves it (ActorRuntimeOptions.hostCalls), when it serves any. */
  mainPort?: MessagePort;
}

/** An event an actor publishes to every socket subscribed to `topic` (for example a chat session). */
export interface ActorEvent {
  topic: string;
  event: string;
  data: unknown;
}

/**
 * The caller's trace context, present only while tracing is on and the call is part of a trace: its W3C
 * `traceparent`, then a space and its `tracestate` when it has one (telemetry/index.ts). The actor's span is its child.
 */
export type TraceCarrier = string;

/** What the main thread calls on an actor host (rpc.ts). */
export interface HostApi {
  /**
   * Delivers `message` to the actor's mailbox and resolves with its reply. `deadline` (epoch ms) is when the
   * caller gives up: the message is then dropped if still queued, or its actor's AbortSignal fires.
   */
  send(kind: string, actorId: string, message: unknown, deadline?: number, trace?: TraceCarrier): Promise<unknown>;
  /** Like send, but the actor writes a stream of frames to `port` and closes it when done. */
  stream(
    kind: string,
    actorId: string,
    message: unknown,
    port: MessagePort,
    deadline?: number,
    trace?: TraceCarrier,
  ): Promise<void>;
  /** Bypasses the mailbox: for signals that must reach a busy actor (abort). `undefined`: no such actor in memory. */
  signal(kind: string, actorId: string, message: unknown, trace?: TraceCarrier): Promise<unknown>;
  stats(): { actors: number; hostIndex: number };
  /** Graceful stop: no new messages, drain the mailboxes (up to `timeoutMs`), close the host's LMDB. */
  close(timeoutMs: number): Promise<{ drained: boolean }>;
}
