// Thread: any (load and the actor hosts)
// The path of a `query` action, split once at load into literal text and placeholders (template.ts),
// filled at each call with every value URL-encoded (encodeURIComponent: a `/`, `?`, `&`, `=` or `#` in a value
// stays inside its path segment or query value, so a typed value never reaches another route or parameter). Plain
// substitution: a name is looked up, never evaluated.
import type { QueryDefinition } from '../definition.js';
import type { Lookup } from '../render.js';
import { compileTemplate, fill, type Template } from '../template.js';

/** The default time of a query: well under a gateway's few seconds. */
export const DEFAULT_QUERY_TIMEOUT_MS = 2_000;

export interface CompiledQuery {
  path: Template;
  /** Value name, answer field path. */
  save: readonly (readonly [string, readonly string[]])[];
  timeoutMs: number;
}

export function compileQuery(definition: QueryDefinition): CompiledQuery {
  return {
    path: compileTemplate(definition.path),
    save: Object.entries(definition.save ?? {}).map(([value, path]) => [value, path.split('.')]),
    timeoutMs: definition.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS,
  };
}

/** The path's problems, each a sentence (none for a path the gateway can be asked). */
export function pathProblems(path: string): string[] {
  const problems: string[] = [];
  const template = compileTemplate(path);
  const literal = typeof template === 'string' ? template : template.filter((p) => typeof p === 'string').join('');
  if (/[{}]/.test(literal)) problems.push('a { or } that is not a {{value}}: value names are letters, digits, _ . -');
  const mark = path.indexOf('?');
  const segments = (mark === -1 ? path : path.slice(0, mark)).slice(1).split('/');
  if (segments.some((segment) => segment === '.' || segment === '..'))
    problems.push('a path segment . or .. (write the path as the route is)');
  else if (segments.some((segment) => segment === '')) problems.push('an empty path segment (//): no route has one');
  if (mark !== -1)
    for (const pair of path.slice(mark + 1).split('&')) {
      const name = pair.split('=', 1)[0] ?? '';
      if (name.includes('{{'))
        problems.push(`a {{value}} in the name of the query parameter ${name}: only values are filled`);
    }
  return problems;
}

/** The path with each placeholder's value (its fallback when missing or empty) URL-encoded. */
export function fillPath(template: Template, lookup: Lookup): string {
  return fill(template, lookup, encodeURIComponent);
}
