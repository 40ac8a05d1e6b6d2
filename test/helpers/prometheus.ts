// A real Prometheus (Debian's `prometheus` package) for a test: scraping given targets every second and evaluating
// rule files every second, its HTTP API queried by the helpers below. Stopped and its data removed in teardown.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureSystemTool } from './system-tools.js';

export interface Prometheus {
  url: string;
  /** GET /api/v1/<path>: the `data` of a success answer (throws on an error answer). */
  api<T = any>(path: string, params?: Record<string, string>): Promise<T>;
}

/** A port free now (Prometheus has no "pick one and say which"). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export async function startPrometheus(
  t: { teardown(fn: () => unknown): void },
  options: { job: string; targets: string[]; ruleFiles: string[] },
): Promise<Prometheus> {
  const binary = ensureSystemTool('prometheus', 'prometheus');
  const dir = mkdtempSync(join(tmpdir(), 'sar-prometheus-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '900ms', evaluation_interval: '1s' },
    rule_files: options.ruleFiles,
    scrape_configs: [{ job_name: options.job, static_configs: [{ targets: options.targets }] }],
  };
  // JSON is YAML.
  writeFileSync(join(dir, 'prometheus.yml'), JSON.stringify(config));
  const port = await freePort();
  const child = spawn(
    binary,
    [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  t.teardown(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${stderr}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) break;
    if (i > 300) throw new Error(`prometheus not ready after 30 s: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async api(path, params = {}) {
      const res = await fetch(`${url}/api/v1/${path}?${new URLSearchParams(params)}`);
      const body = (await res.json()) as { status: string; data: any; error?: string };
      if (body.status !== 'success') throw new Error(`prometheus ${path} ${JSON.stringify(params)}: ${body.error}`);
      return body.data;
    },
  };
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless']);
const KEYWORDS_ALSO = new Set(['bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects: identifiers left once strings, label matchers, range durations,
 * `by (...)` lists and function names are taken out.
 */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, name, call] = match;
    if (call || KEYWORDS.has(name) || KEYWORDS_ALSO.has(name.toLowerCase())) continue;
    names.add(name);
  }
  return [...names];
}
