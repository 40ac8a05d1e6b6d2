// USSD services directories for tests: the example service of docs/ussd-services.md (extracted from the doc, so
// the doc's example is the one tested) beside the shipped built-in service.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The ```yaml block of docs/ussd-services.md that starts `# market.yaml`. */
export function docExampleYaml(): string {
  const doc = readFileSync(join(ROOT, 'docs', 'ussd-services.md'), 'utf8');
  const block = /```yaml\n(# market\.yaml[\s\S]*?)```/.exec(doc)?.[1];
  if (!block) throw new Error('docs/ussd-services.md has no ```yaml block starting "# market.yaml"');
  return block;
}

/** A fresh directory with the doc's example (market.yaml) and, unless `builtin` is false, builtin.yaml. */
export function docExampleDir(t: { teardown(fn: () => unknown): void }, builtin = true): string {
  const dir = mkdtempSync(join(tmpdir(), 'sar-ussd-doc-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'market.yaml'), docExampleYaml());
  if (builtin) copyFileSync(join(ROOT, 'ussd-services', 'builtin.yaml'), join(dir, 'builtin.yaml'));
  return dir;
}
