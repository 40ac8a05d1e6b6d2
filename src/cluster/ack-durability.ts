// Thread: main
// At start-up, whether the NATS servers this node reaches fsync a JetStream write before they
// acknowledge it. That needs nats-server 2.10.23 or later (2.9 cannot; 2.10.20-2.10.22 lose whole streams on a
// crash) with `sync_interval: always` in its jetstream block. The version comes from the connected server's INFO;
// the sync setting only from a monitoring endpoint (/varz, `jetstream.config.sync_always`), so it is read from
// NATS_MONITOR_URL when given and is otherwise unknown.

/** The first nats-server release that both syncs before acknowledging and keeps its streams across crashes. */
export const MIN_SYNCED_VERSION = '2.10.23';

/** EX_CONFIG: the node refuses to start on servers whose acknowledgements are not synced. */
export const UNSYNCED_EXIT_CODE = 78;

export interface AckDurability {
  /** `synced`: every server read says so; `unsynced`: one says not; `unknown`: a setting could not be read. */
  verdict: 'synced' | 'unsynced' | 'unknown';
  /** One sentence per finding, for the log and the refusal. */
  reasons: string[];
}

/** Thrown at start-up (main exits with its code) when acknowledgements are not synced and that was not accepted. */
export class UnsyncedAcksError extends Error {
  readonly exitCode = UNSYNCED_EXIT_CODE;
}

/** -1, 0 or 1 as `a` is older than, the same as or newer than `b` (dotted numbers; a suffix such as -beta is ignored). */
export function compareVersions(a: string, b: string): number {
  const parts = (version: string) =>
    version
      .replace(/^v/, '')
      .split(/[-+]/)[0]
      .split('.')
      .map((part) => Number.parseInt(part, 10) || 0);
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const diff = (x[i] ?? 0) - (y[i] ?? 0);
    if (diff !== 0) return Math.sign(diff);
  }
  return 0;
}

interface Varz {
  server_name?: string;
  version?: string;
  jetstream?: { config?: { sync_always?: boolean; sync_interval?: number } };
}

async function readVarz(monitorUrl: string, timeoutMs: number): Promise<Varz | string> {
  const url = `${monitorUrl.replace(/\/+$/, '')}/varz`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (!response.ok) return `${url} answered ${response.status}`;
    return (await response.json()) as Varz;
  } catch (error) {
    return `${url} did not answer: ${(error as Error).message}`;
  }
}

/**
 * Checks the connected server's version (`info`, from INFO) and every monitoring endpoint's version and sync
 * setting. Unsynced wins over unknown: one server that acknowledges unsynced writes can be part of a quorum.
 */
export async function checkAckDurability(
  info: { version?: string; server_name?: string } | undefined,
  monitorUrls: readonly string[],
  options: { timeoutMs?: number } = {},
): Promise<AckDurability> {
  const unsynced: string[] = [];
  const unknown: string[] = [];
  const tooOld = (version: string | undefined) =>
    version !== undefined && compareVersions(version, MIN_SYNCED_VERSION) < 0;
  if (!info?.version) unknown.push('the connected NATS server did not say its version');
  else if (tooOld(info.version)) {
    unsynced.push(
      `nats-server ${info.version} (${info.server_name ?? 'connected server'}) is older than ${MIN_SYNCED_VERSION}: it cannot fsync before acknowledging`,
    );
  }
  const varzs = await Promise.all(monitorUrls.map((url) => readVarz(url, options.timeoutMs ?? 3_000)));
  for (const [i, varz] of varzs.entries()) {
    if (typeof varz === 'string') {
      unknown.push(varz);
      continue;
    }
    const name = `${varz.server_name ?? monitorUrls[i]} (${monitorUrls[i]})`;
    if (tooOld(varz.version))
      unsynced.push(`nats-server ${varz.version} at ${name} is older than ${MIN_SYNCED_VERSION}`);
    else if (!varz.jetstream?.config) unknown.push(`${name} shows no JetStream configuration`);
    else if (varz.jetstream.config.sync_always !== true) {
      const interval = varz.jetstream.config.sync_interval;
      unsynced.push(
        `${name} acknowledges before fsync (sync_interval ${interval ? `${interval / 1e9} s` : 'default'}, not always)`,
      );
    }
  }
  if (monitorUrls.length === 0)
    unknown.push("NATS_MONITOR_URL is not set, so the servers' sync_interval cannot be read");
  if (unsynced.length > 0) return { verdict: 'unsynced', reasons: [...unsynced, ...unknown] };
  if (unknown.length > 0) return { verdict: 'unknown', reasons: unknown };
  return {
    verdict: 'synced',
    reasons: [`${monitorUrls.length} server(s) report sync_interval: always, version >= ${MIN_SYNCED_VERSION}`],
  };
}
