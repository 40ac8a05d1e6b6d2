// Thread: main (tooling)
// What the local launchers (local-nats-cluster.ts, local-nodes.ts) need of the machine:
// loopback ports free for a child to bind later, claimed machine-wide, and the command prefix that makes the kernel
// kill a child when its launcher dies.
import { execFileSync } from 'node:child_process';
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A host a local process runs on: an address it listens on, and the command prefix that puts it there. */
export interface LocalHost {
  address: string;
  command?: readonly string[];
}

let parentDeathPrefix: readonly string[] | undefined;

/**
 * Command prefix under which a child is SIGKILLed by the kernel when this process dies, however it dies: util-linux's
 * `setpriv --pdeathsig` sets PR_SET_PDEATHSIG and execs the command (same pid, so nats-server needs no change). The
 * launchers' 'exit' handlers cover a normal exit only; after a SIGKILL or a signal's default action (a second Ctrl-C)
 * children in process groups of their own (npm run cluster) ran on forever. Empty where setpriv is missing (not
 * Linux): no such guard there. The signal follows the thread that spawned the child: call launchers from the main
 * thread.
 */
export function parentDeathCommand(): readonly string[] {
  if (parentDeathPrefix === undefined) {
    const prefix = ['setpriv', '--pdeathsig', 'KILL', '--'];
    try {
      execFileSync(prefix[0], [...prefix.slice(1), 'true'], { stdio: 'ignore' });
      parentDeathPrefix = prefix;
    } catch {
      parentDeathPrefix = [];
    }
  }
  return parentDeathPrefix;
}

/**
 * Ports handed out by freePorts: below Linux's ephemeral range (32768-60999), so neither another process's bind to
 * port 0 nor the local end of an outgoing connection can take one between freePorts and the child's bind (the race
 * of picking a port by binding port 0 and closing it).
 */
const PORT_RANGE = { first: 20_000, last: 32_000 };
/** Claims of ports by freePorts callers on this machine (one file per port); a claim older than this is stale. */
const CLAIMS_DIR = join(tmpdir(), 'sar-port-claims');
const CLAIM_MS = 60 * 60_000;

/** Claims `port` for this process unless another freePorts caller claimed it within CLAIM_MS. */
function claim(port: number): boolean {
  mkdirSync(CLAIMS_DIR, { recursive: true });
  const file = join(CLAIMS_DIR, String(port));
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
    return true;
  } catch {
    try {
      if (Date.now() - statSync(file).mtimeMs < CLAIM_MS) return false;
      writeFileSync(file, String(process.pid));
      return true;
    } catch {
      return false;
    }
  }
}

const bindable = (port: number) =>
  new Promise<Server | undefined>((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });

/**
 * `count` distinct loopback ports free now, for children that bind them later. Each is outside the ephemeral range
 * and claimed machine-wide (a file in the temp dir), so concurrent callers (parallel test files) never get the same
 * port and nothing else takes it in between unless it binds that very number.
 */
export async function freePorts(count: number): Promise<number[]> {
  const held: Server[] = [];
  const ports: number[] = [];
  try {
    for (let tries = 0; ports.length < count; tries++) {
      if (tries > 50 * count) throw new Error(`no ${count} free ports in ${PORT_RANGE.first}-${PORT_RANGE.last}`);
      const port = PORT_RANGE.first + Math.floor(Math.random() * (PORT_RANGE.last - PORT_RANGE.first));
      if (ports.includes(port)) continue;
      const server = await bindable(port);
      if (!server) continue;
      held.push(server);
      if (claim(port)) ports.push(port);
    }
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
  return ports;
}
