// docs/configuration.md cannot drift from the environment schemas: each face's table lists exactly the variables
// its schema declares, and a literal default in the schema is the one the table gives.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { coreEnv } from '../dist/src/app/config.js';
import { ussdEnv } from '../dist/src/ussd/config.js';
import { oracleEnv } from '../dist/src/oracle/config.js';
import { gatewayEnv } from '../dist/src/gateway/config.js';
import { metricsEnv } from '../dist/src/metrics/config.js';
import { playgroundEnv } from '../dist/src/playground/config.js';
import { clusterEnv } from '../dist/src/cluster/config.js';
import { telemetryEnv } from '../dist/src/telemetry/config.js';

const SECTIONS: Record<string, Record<string, unknown>> = {
  'Server (every face)': coreEnv,
  USSD: ussdEnv,
  Oracle: oracleEnv,
  'Protocol query gateway': gatewayEnv,
  Metrics: metricsEnv,
  Playground: playgroundEnv,
  Cluster: clusterEnv,
  Tracing: telemetryEnv,
};
/** Defaults that depend on the machine, which the table describes in words. */
const DESCRIBED_DEFAULTS = new Set(['ACTOR_THREADS']);

/** Each `## Heading` of the page with the variables of its table: name -> its Default cell. */
function tables(markdown: string): Map<string, Map<string, string>> {
  const sections = new Map<string, Map<string, string>>();
  let current: Map<string, string> | undefined;
  for (const line of markdown.split('\n')) {
    const heading = /^## (.+)$/.exec(line);
    if (heading) sections.set(heading[1], (current = new Map()));
    const row = /^\| `([A-Z][A-Z0-9_]*)` \| ([^|]*) \|/.exec(line);
    if (row && current) current.set(row[1], row[2].trim());
  }
  return sections;
}

/** The literal default of a variable's schema (optional, or a pipe that starts with one); undefined if none. */
function defaultOf(schema: unknown): string | undefined {
  const s = schema as { default?: unknown; pipe?: unknown[] };
  const value = s.default ?? (s.pipe?.[0] as { default?: unknown } | undefined)?.default;
  return typeof value === 'string' ? value : undefined;
}

const page = tables(readFileSync('docs/configuration.md', 'utf8'));

for (const [section, schema] of Object.entries(SECTIONS)) {
  t.test(section, async (t) => {
    const rows = page.get(section);
    t.ok(rows, `docs/configuration.md has a "## ${section}" table`);
    t.same(
      [...(rows?.keys() ?? [])].sort(),
      Object.keys(schema).sort(),
      "the table lists exactly the schema's variables",
    );
    for (const [name, entry] of Object.entries(schema)) {
      const value = defaultOf(entry);
      if (value === undefined || DESCRIBED_DEFAULTS.has(name)) continue;
      const cell = rows?.get(name) ?? '';
      if (value === '') t.match(cell, /^\(/, `${name}: no default, said in words`);
      else t.ok(cell.startsWith(`\`${value}\``), `${name}: the default \`${value}\` (table: ${cell})`);
    }
  });
}

t.test('every variable is in one table only', async (t) => {
  const seen = new Map<string, string>();
  for (const [section, rows] of page) {
    for (const name of rows.keys()) {
      t.notOk(seen.has(name), `${name} only once (also in ${seen.get(name)})`);
      seen.set(name, section);
    }
  }
});
