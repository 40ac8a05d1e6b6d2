// Thread: main
// The container and unit health check (deploy/): `node dist/src/tools/health-check.js [--path /health] [--wait S]`.
// Exits 0 when GET http://127.0.0.1:$PORT<path> answers 200, else 1 with one line saying what it got. Node itself
// does the request, so an image needs no curl or wget. --wait retries for up to S seconds (a unit's start-up).
import { parseArgs } from 'node:util';

const USAGE = `Usage: node dist/src/tools/health-check.js [--url URL | --path PATH] [--wait SECONDS]

  --path  the route to ask on 127.0.0.1:$PORT (PORT default 3000); default /health (readiness; / is liveness)
  --url   the whole URL instead
  --wait  keep asking for up to this many seconds until it answers 200`;

/** One try must not hang a checker that gives it a few seconds. */
const TRY_TIMEOUT_MS = 3_000;
const RETRY_MS = 500;

async function ask(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(TRY_TIMEOUT_MS) });
    const body = await res.text();
    return res.status === 200 ? undefined : `${url} answered ${res.status}: ${body.slice(0, 200)}`;
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return `${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`;
  }
}

let values: { url?: string; path?: string; wait?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      url: { type: 'string' },
      path: { type: 'string' },
      wait: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  console.error(`${(error as Error).message}\n\n${USAGE}`);
  process.exit(64);
}
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const waitSeconds = Number(values.wait ?? 0);
if (!Number.isFinite(waitSeconds) || waitSeconds < 0) {
  console.error(`--wait ${values.wait}: must be a number of seconds\n\n${USAGE}`);
  process.exit(64);
}
const url = values.url ?? `http://127.0.0.1:${process.env.PORT?.trim() || '3000'}${values.path ?? '/health'}`;
const deadline = Date.now() + waitSeconds * 1000;
for (;;) {
  const problem = await ask(url);
  if (problem === undefined) process.exit(0);
  if (Date.now() + RETRY_MS > deadline) {
    console.error(`health check failed: ${problem}`);
    process.exit(1);
  }
  await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
}
