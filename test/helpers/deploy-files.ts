// Readers of the deploy files (deploy/): YAML with the `yaml` package, systemd units and env files by their own
// simple grammars, and the server's environment each file gives a container or a unit, with its secrets filled in.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

/** Every document of a YAML file; throws on a syntax error, naming the file. */
export function yamlDocuments(path: string): any[] {
  // merge: compose files share settings with YAML merge keys (`<<: *node`).
  const documents = parseAllDocuments(readFileSync(path, 'utf8'), { merge: true });
  const errors = documents.flatMap((document) => document.errors);
  if (errors.length > 0) throw new Error(`${path}: ${errors.map((e) => e.message).join('; ')}`);
  return documents.map((document) => document.toJS({ maxAliasCount: 100 }));
}

/** A systemd unit: section -> key -> values (a key may repeat). */
export type Unit = Map<string, Map<string, string[]>>;

export function parseUnit(path: string): Unit {
  const unit: Unit = new Map();
  let section: Map<string, string[]> | undefined;
  for (const [i, raw] of readFileSync(path, 'utf8').split('\n').entries()) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header) {
      unit.set(header[1], (section = new Map()));
      continue;
    }
    const entry = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!entry || !section) throw new Error(`${path}:${i + 1}: not a section header or Key=value: ${line}`);
    section.set(entry[1], [...(section.get(entry[1]) ?? []), entry[2]]);
  }
  return unit;
}

/** A unit's one value of `key` in `section`, or undefined. */
export const unitValue = (unit: Unit, section: string, key: string) => unit.get(section)?.get(key)?.at(-1);

/**
 * An env file: the variables it sets (KEY=value) and those it shows commented out (`# KEY=value`), which an
 * operator may set as written.
 */
export function parseEnvFile(path: string): { set: Record<string, string>; commented: Record<string, string> } {
  const set: Record<string, string> = {};
  const commented: Record<string, string> = {};
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const entry = /^(#\s*)?([A-Z][A-Z0-9_]*)=(\S*)/.exec(line);
    if (entry) (entry[1] ? commented : set)[entry[2]] = entry[3];
  }
  return { set, commented };
}

/** Seconds in a compose duration (`20s`, `1m30s`). */
export function composeSeconds(duration: string): number {
  const parts = [...String(duration).matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s)/g)];
  if (parts.length === 0) throw new Error(`not a compose duration: ${duration}`);
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001 };
  return parts.reduce((sum, [, n, u]) => sum + Number(n) * unit[u], 0);
}

/** Values a production start needs, valid for the schema, standing in for what a secret store holds. */
export interface Secrets {
  PIN_ENCRYPTION_KEY: string;
  ORACLE_PRIVATE_KEY: string;
  OPERATOR_TOKEN: string;
}

/**
 * The environment a compose service gives its container: `${NAME:?message}` and `${NAME}` read the operator's
 * shell, which holds the secrets.
 */
export function composeEnv(environment: Record<string, unknown>, secrets: Secrets): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    env[name] = String(value).replace(/\$\{([A-Z_]+)(:?[?-][^}]*)?\}/g, (_, ref: string) => {
      if (!(ref in secrets)) throw new Error(`${name} reads \${${ref}}, which is no secret the docs name`);
      return secrets[ref as keyof Secrets];
    });
  }
  return env;
}

/** Where a Kubernetes env entry takes its value from, when not `value`. */
export type EnvSource = { secret: { name: string; key: string } } | { field: string };

/** A Kubernetes container's env: plain values, and what each valueFrom names (resolved by `resolve`). */
export function containerEnv(
  container: { env?: { name: string; value?: unknown; valueFrom?: any }[] },
  resolve: (source: EnvSource) => string,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of container.env ?? []) {
    if (entry.value !== undefined) env[entry.name] = String(entry.value);
    else if (entry.valueFrom?.secretKeyRef) env[entry.name] = resolve({ secret: entry.valueFrom.secretKeyRef });
    else if (entry.valueFrom?.fieldRef) env[entry.name] = resolve({ field: entry.valueFrom.fieldRef.fieldPath });
    else throw new Error(`env ${entry.name}: neither a value nor a secret or field reference`);
  }
  return env;
}

/** A Kubernetes object of `kind` (and `name`) among a file's documents. */
export function objectOf(documents: any[], kind: string, name?: string): any {
  const found = documents.find((d) => d?.kind === kind && (name === undefined || d.metadata?.name === name));
  if (!found) throw new Error(`no ${kind}${name ? ` ${name}` : ''}`);
  return found;
}

/** `2.10.27` of an image `nats:2.10.27-alpine`, as numbers. */
export function imageVersion(image: string): number[] {
  const tag = /:(\d+(?:\.\d+)*)/.exec(image)?.[1];
  if (!tag) throw new Error(`no version tag in ${image}`);
  return tag.split('.').map(Number);
}

export function atLeast(version: number[], floor: number[]): boolean {
  for (let i = 0; i < floor.length; i++) {
    const [a, b] = [version[i] ?? 0, floor[i]];
    if (a !== b) return a > b;
  }
  return true;
}

/** Whether a Node.js major fits an `engines.node` range of this package's form (`20 || 22 || >=24`). */
export function enginesAllow(range: string, major: number): boolean {
  return range.split('||').some((part) => {
    const p = part.trim();
    const min = /^>=\s*(\d+)$/.exec(p);
    return min ? major >= Number(min[1]) : Number(p) === major;
  });
}
