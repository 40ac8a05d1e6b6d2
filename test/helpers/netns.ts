// Hosts of their own for a test's processes: one network namespace per host, each joined by a veth pair to a
// bridge in a "switch" namespace, and this process (the test: clients, load balancer) on the same bridge through
// a veth of its own. A host's link can be cut (its switch port down) or flapped, and what one host sends to another
// dropped (one way, or both ways for a cut between two hosts). Names carry this process's id, so parallel runs do not clash; teardown (and process exit) deletes
// every namespace and link it made. Needs root and iproute2.
import { execFileSync } from 'node:child_process';
import { ensureSystemTool } from './system-tools.js';

export interface NetHost {
  readonly name: string;
  readonly address: string;
  /** Prefix that runs a command on this host: `ip netns exec <ns>`. */
  readonly command: readonly string[];
}

export interface Net {
  readonly hosts: readonly NetHost[];
  /** This process's address on the bridge. */
  readonly tester: string;
  /** Cuts every link of host i (its switch port goes down): nothing in or out. */
  cut(i: number): void;
  /** Drops every packet host `from` sends to host `to` (one way; call both ways for a symmetric cut). */
  block(from: number, to: number): void;
  /** Undoes every cut and block. */
  healAll(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const quietly = (fn: () => unknown) => {
  try {
    fn();
  } catch {
    // already gone
  }
};

/**
 * Namespaces (and the processes in them) left by a run of this helper whose process is gone: killed by a signal
 * (a test runner's timeout), it could not clean up.
 */
function removeOrphans(): void {
  const names = execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.split(' ')[0]);
  for (const ns of names) {
    const owner = /^p(\d+)(sw|h\d+)$/.exec(ns);
    if (!owner || Number(owner[1]) === process.pid || alive(Number(owner[1]))) continue;
    const pids = execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8' }).split('\n').filter(Boolean);
    for (const pid of pids) quietly(() => process.kill(Number(pid), 'SIGKILL'));
    quietly(() => ip('netns', 'del', ns));
    quietly(() => ip('link', 'del', `p${owner[1]}t`));
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

export function createNet(t: { teardown(fn: () => unknown): void }, count: number): Net {
  ensureSystemTool('ip', 'iproute2');
  if (process.getuid?.() !== 0) throw new Error('the partition tests need root (network namespaces)');
  const id = `p${process.pid}`;
  const subnet = `10.${200 + (process.pid % 50)}.${Math.floor(process.pid / 50) % 250}`;
  const sw = `${id}sw`;
  const hostNs = (i: number) => `${id}h${i}`;
  const made: string[] = [];
  const cleanup = () => {
    for (const ns of made) quietly(() => ip('netns', 'del', ns));
    quietly(() => ip('link', 'del', `${id}t`));
  };
  process.on('exit', cleanup);
  t.teardown(() => {
    cleanup();
    process.off('exit', cleanup);
  });

  removeOrphans();
  ip('netns', 'add', sw);
  made.push(sw);
  ip('-n', sw, 'link', 'add', 'br0', 'type', 'bridge');
  ip('-n', sw, 'link', 'set', 'br0', 'up');
  const hosts: NetHost[] = [];
  for (let i = 0; i < count; i++) {
    const ns = hostNs(i);
    ip('netns', 'add', ns);
    made.push(ns);
    ip('link', 'add', `${id}a${i}`, 'type', 'veth', 'peer', 'name', `${id}b${i}`);
    ip('link', 'set', `${id}a${i}`, 'netns', ns);
    ip('link', 'set', `${id}b${i}`, 'netns', sw);
    ip('-n', ns, 'link', 'set', `${id}a${i}`, 'name', 'eth0');
    ip('-n', ns, 'addr', 'add', `${subnet}.${i + 1}/24`, 'dev', 'eth0');
    ip('-n', ns, 'link', 'set', 'eth0', 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    ip('-n', sw, 'link', 'set', `${id}b${i}`, 'master', 'br0', 'up');
    hosts.push({ name: ns, address: `${subnet}.${i + 1}`, command: ['ip', 'netns', 'exec', ns] });
  }
  ip('link', 'add', `${id}t`, 'type', 'veth', 'peer', 'name', `${id}tb`);
  ip('link', 'set', `${id}tb`, 'netns', sw);
  ip('-n', sw, 'link', 'set', `${id}tb`, 'master', 'br0', 'up');
  ip('addr', 'add', `${subnet}.254/24`, 'dev', `${id}t`);
  ip('link', 'set', `${id}t`, 'up');

  // The kernel here has netem but no tc classifiers or actions and no netfilter tools: a one-way block is a
  // blackhole route on the sending host (its packets to that address are dropped; new connections to it fail).
  const blocked: [number, number][] = [];
  return {
    hosts,
    tester: `${subnet}.254`,
    cut: (i) => ip('-n', sw, 'link', 'set', `${id}b${i}`, 'down'),
    block(from, to) {
      ip('-n', hostNs(from), 'route', 'add', 'blackhole', `${hosts[to].address}/32`);
      blocked.push([from, to]);
    },
    healAll() {
      for (let i = 0; i < count; i++) ip('-n', sw, 'link', 'set', `${id}b${i}`, 'up');
      for (const [from, to] of blocked.splice(0))
        quietly(() => ip('-n', hostNs(from), 'route', 'del', 'blackhole', `${hosts[to].address}/32`));
    },
  };
}
