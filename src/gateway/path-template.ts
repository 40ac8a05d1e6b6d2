// Thread: main
// google.api.http path templates: `/ixo/entity/{id}`, `/v1/{name=shelves/*/books/*}`, `/files/{path=**}`,
// `/v1/{name}:cancel`. A template is parsed once into segments; a request path is matched segment by
// segment. Without a verb in the template, a last path segment containing `:` (did:ixo:entity:abc) is
// a plain value.

export type Segment = { kind: 'literal'; value: string } | { kind: 'one' } | { kind: 'rest' };

export interface Variable {
  /** Field path in the request message, e.g. ['name'] or ['pagination', 'key']. */
  readonly fieldPath: readonly string[];
  /** The field path dotted, e.g. 'pagination.key': the key of its bound value. */
  readonly name: string;
  readonly start: number;
  /** Exclusive end; for a `**` variable, the end of the path. */
  readonly end: number;
}

export interface PathTemplate {
  readonly source: string;
  readonly segments: readonly Segment[];
  readonly variables: readonly Variable[];
  readonly verb?: string;
}

export class TemplateError extends Error {
  constructor(template: string, reason: string) {
    super(`invalid path template ${JSON.stringify(template)}: ${reason}`);
    this.name = 'TemplateError';
  }
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

export function parseTemplate(source: string): PathTemplate {
  if (!source.startsWith('/')) throw new TemplateError(source, 'must start with /');
  const { body, verb } = splitVerb(source);
  const segments: Segment[] = [];
  const variables: Variable[] = [];
  for (const part of splitOutsideBraces(body.slice(1), source)) {
    if (part.startsWith('{')) {
      if (!part.endsWith('}')) throw new TemplateError(source, `unclosed variable ${part}`);
      const [path, pattern = '*'] = part.slice(1, -1).split('=', 2);
      if (!IDENT.test(path)) throw new TemplateError(source, `bad field path ${JSON.stringify(path)}`);
      const start = segments.length;
      for (const inner of pattern.split('/')) segments.push(plainSegment(inner, source));
      variables.push({ fieldPath: path.split('.'), name: path, start, end: segments.length });
    } else {
      segments.push(plainSegment(part, source));
    }
  }
  const restAt = segments.findIndex((segment) => segment.kind === 'rest');
  if (restAt !== -1 && restAt !== segments.length - 1) throw new TemplateError(source, '** must be the last segment');
  return { source, segments, variables, verb };
}

/** A request path (without query) as percent-decoded segments; undefined when it cannot be decoded. */
export function splitPath(path: string): string[] | undefined {
  if (!path.startsWith('/')) return undefined;
  const parts = path.slice(1).split('/');
  for (let i = 0; i < parts.length; i++) {
    const value = decodeSegment(parts[i]);
    if (value === undefined) return undefined;
    parts[i] = value;
  }
  return parts;
}

/** Binds a request path to the template: field path -> decoded value, or undefined. */
export function matchTemplate(template: PathTemplate, path: string): Map<string, string> | undefined {
  const parts = splitPath(path);
  return parts && matchSegments(template, parts);
}

/** Binds decoded path segments (see splitPath) to the template. */
export function matchSegments(template: PathTemplate, parts: readonly string[]): Map<string, string> | undefined {
  if (template.verb !== undefined) {
    const last = parts[parts.length - 1];
    const suffix = `:${template.verb}`;
    if (!last.endsWith(suffix)) return undefined;
    parts = [...parts.slice(0, -1), last.slice(0, -suffix.length)];
  }
  const { segments } = template;
  const last = segments[segments.length - 1];
  // `**` takes one segment or more: `/denoms_metadata/{denom=**}` must leave `/denoms_metadata` (the list)
  // to its own route, as on a node.
  if (last?.kind === 'rest' ? parts.length < segments.length : parts.length !== segments.length) return undefined;
  for (let i = 0; i < parts.length; i++) {
    const segment = segments[Math.min(i, segments.length - 1)];
    if (segment.kind === 'literal' && segment.value !== parts[i]) return undefined;
    if (segment.kind === 'one' && parts[i] === '') return undefined;
  }
  const bound = new Map<string, string>();
  for (const variable of template.variables) {
    const end = segments[variable.end - 1]?.kind === 'rest' ? parts.length : variable.end;
    bound.set(variable.name, parts.slice(variable.start, end).join('/'));
  }
  return bound;
}

/** The template in OpenAPI path form: `/files/{path=**}` -> `/files/{path}`. */
export function openApiPath(template: PathTemplate): string {
  return template.source.replace(/\{([^}=]+)(=[^}]*)?\}/g, '{$1}');
}

function splitVerb(source: string): { body: string; verb?: string } {
  const lastSlash = source.lastIndexOf('/');
  const lastBrace = source.lastIndexOf('}');
  const colon = source.indexOf(':', Math.max(lastSlash, lastBrace));
  if (colon === -1) return { body: source };
  return { body: source.slice(0, colon), verb: source.slice(colon + 1) };
}

function splitOutsideBraces(body: string, source: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const char of body) {
    if (char === '{') depth++;
    if (char === '}') depth--;
    if (depth < 0 || depth > 1) throw new TemplateError(source, 'unbalanced braces');
    if (char === '/' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  if (depth !== 0) throw new TemplateError(source, 'unbalanced braces');
  parts.push(current);
  return parts;
}

function plainSegment(part: string, source: string): Segment {
  if (part === '*') return { kind: 'one' };
  if (part === '**') return { kind: 'rest' };
  if (part === '' || /[{}*]/.test(part)) throw new TemplateError(source, `bad segment ${JSON.stringify(part)}`);
  return { kind: 'literal', value: part };
}

function decodeSegment(raw: string): string | undefined {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}
