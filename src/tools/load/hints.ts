// Thread: main
// What a run's figures say to the person who ran it, beyond the numbers: a server's rate limit that refused the
// load (a default server allows 100 requests a minute per client address), and the run's SLO verdict.
import type { RunSummary } from './run.js';

const RATE_LIMITED = /(^|\s)http 429$/;

/** Requests the target refused with 429 (HTTP requests and socket handshakes). */
export function rateLimited(errorsByKind: Record<string, number>): number {
  return Object.entries(errorsByKind).reduce((sum, [kind, count]) => sum + (RATE_LIMITED.test(kind) ? count : 0), 0);
}

/** Sentences for the summary and the HTML report; empty when the figures need no explanation. */
export function hintsFor(summary: Pick<RunSummary, 'errorsByKind' | 'requests'>): string[] {
  const hints: string[] = [];
  const limited = rateLimited(summary.errorsByKind);
  if (limited > 0) {
    const share = summary.requests.sent
      ? ` (${((limited / summary.requests.sent) * 100).toFixed(1)}% of those sent)`
      : '';
    hints.push(
      `${limited} requests${share} were refused with 429 by the server's rate limit (RATE_LIMIT_MAX requests per ` +
        'RATE_LIMIT_WINDOW_SECONDS for each client address; 100 a minute by default), so this run measured the limit, ' +
        "not the server: add this machine's address to the server's RATE_LIMIT_ALLOWLIST (e.g. RATE_LIMIT_ALLOWLIST=10.0.0.7) and restart it.",
    );
  }
  return hints;
}
