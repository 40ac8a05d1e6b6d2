// strace attached to a running process (and its threads) for a test: what the process did at the system calls.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Test } from 'tap';
import { ensureSystemTool } from './system-tools.js';

/**
 * Attaches strace to `pid` with `options` (e.g. `-ttt`, `-e trace=...`), writing to `file`; resolves once it traces
 * every thread. The function it resolves to detaches and answers the trace's text.
 */
export async function attachStrace(
  t: Test,
  pid: number,
  file: string,
  options: string[],
): Promise<() => Promise<string>> {
  const strace = ensureSystemTool('strace', 'strace');
  const tracer = spawn(strace, ['-f', '-p', String(pid), ...options, '-o', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.teardown(() => void tracer.kill('SIGKILL'));
  const exited = new Promise((resolve) => tracer.once('exit', resolve));
  // strace says "Process N attached with M threads" once it traces all of them.
  await new Promise<void>((resolve, reject) => {
    let said = '';
    tracer.stderr.on('data', (chunk) => {
      said += chunk;
      if (said.includes('attached')) resolve();
    });
    void exited.then(() => reject(new Error(`strace ended before attaching (ptrace not permitted here?):\n${said}`)));
  });
  return async () => {
    tracer.kill('SIGINT'); // detaches and flushes its file
    await exited;
    return readFileSync(file, 'utf8');
  };
}
