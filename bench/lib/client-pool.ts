// Client processes (bench/lib/event-clients.ts) holding many event-channel sockets between them, so the
// sockets' client-side cost is spread over processes other than the benchmark's.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { ConnectOrder } from './event-clients.js';
import { ROOT } from './process.js';

/** Client processes, each holding a share of the sockets. */
export class ClientPool {
  private constructor(private readonly children: ChildProcess[]) {}

  static start(count: number): ClientPool {
    const script = join(ROOT, 'dist/bench/lib/event-clients.js');
    // Each process needs a descriptor per socket: raise the soft limit to the hard one first.
    const children = Array.from({ length: count }, () =>
      spawn('sh', ['-c', `ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "${process.execPath}" "${script}"`], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    const kill = () => {
      for (const child of children) child.kill('SIGKILL');
    };
    process.once('exit', kill);
    return new ClientPool(children);
  }

  #ask<T>(child: ChildProcess, message: unknown, answer: string): Promise<T> {
    return new Promise((resolve, reject) => {
      // Both listeners go once answered: `count` is asked dozens of times per run.
      const onMessage = (reply: { type: string }) => {
        if (reply.type !== answer) return;
        child.off('message', onMessage).off('exit', onExit);
        resolve(reply as T);
      };
      const onExit = (code: number | null) => reject(new Error(`client process exited with ${code}`));
      child.on('message', onMessage).once('exit', onExit);
      child.send(message as never);
    });
  }

  /**
   * Opens a socket per entry of `sessions`, shared out over the processes; `open` counts every socket the
   * processes hold, earlier ones included. `ownSourceAddresses`: process i connects from 127.0.0.(2 + i).
   */
  async connect(
    order: Omit<ConnectOrder, 'type' | 'sessions' | 'localAddress'> & { ownSourceAddresses?: boolean },
    sessions: string[],
  ): Promise<{ open: number; failed: number; error?: string }> {
    const { ownSourceAddresses, ...common } = order;
    const shares = this.children.map((_, i) => sessions.filter((__, j) => j % this.children.length === i));
    const replies = await Promise.all(
      this.children.map((child, i) =>
        this.#ask<{ open: number; failed: number; error?: string }>(
          child,
          {
            type: 'connect',
            ...common,
            sessions: shares[i],
            localAddress: ownSourceAddresses ? `127.0.0.${2 + i}` : undefined,
          },
          'connected',
        ),
      ),
    );
    return {
      open: replies.reduce((sum, r) => sum + r.open, 0),
      failed: replies.reduce((sum, r) => sum + r.failed, 0),
      error: replies.find((r) => r.error)?.error,
    };
  }

  async count(): Promise<{ events: number; open: number }> {
    const replies = await Promise.all(
      this.children.map((child) => this.#ask<{ events: number; open: number }>(child, { type: 'count' }, 'count')),
    );
    return { events: replies.reduce((sum, r) => sum + r.events, 0), open: replies.reduce((sum, r) => sum + r.open, 0) };
  }

  async close(): Promise<void> {
    await Promise.all(
      this.children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.send({ type: 'close' });
          }),
      ),
    );
  }
}
