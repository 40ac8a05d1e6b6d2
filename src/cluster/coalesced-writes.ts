// Thread: any
// The NATS client hands each batch of commands to its socket at the end of the microtask that made
// them (nats-core queues a flush per command burst), so under load every routed request or append that arrives in an
// event of its own (one HTTP request, one reply) is one socket write, one system call. Corking the socket until the
// event loop's check phase turns the commands of one loop iteration into one write (writev).
import type { Socket } from 'node:net';
import { setImmediate } from 'node:timers';
import { NodeTransport } from '@nats-io/transport-node/lib/node_transport.js';

let installed = false;

/** Holds what is written to `socket` in this event-loop iteration until its check phase: one write (writev). */
function corkUntilCheckPhase(socket: Socket): void {
  if (socket.destroyed || socket.writableCorked > 0) return;
  socket.cork();
  setImmediate(() => socket.uncork());
}

/** Makes every NATS connection of this thread write the commands of one event-loop iteration together. */
export function coalesceNatsWrites(): void {
  if (installed) return;
  installed = true;
  const send = NodeTransport.prototype.send;
  NodeTransport.prototype.send = function (this: NodeTransport, frame: Uint8Array): void {
    if (this.socket) corkUntilCheckPhase(this.socket);
    send.call(this, frame);
  };
}
