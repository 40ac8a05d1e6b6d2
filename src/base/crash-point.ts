// Thread: any
// Test hook for crash atomicity: with CRASH_AT=<name> the process kills itself (SIGKILL, as `kill -9`) when
// any thread reaches the marked point of that name. Unset (always, outside tests) it does nothing.
const target = process.env.CRASH_AT;

/** Marks a point between two commits (docs/api.md, USSD: "Account creation survives a crash"). */
export function crashPoint(name: string): void {
  if (target === name) process.kill(process.pid, 'SIGKILL');
}
