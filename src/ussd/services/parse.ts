// Thread: any (the server at load, the checker)
// Reads one service definition file, YAML or JSON (JSON is read
// by the same YAML 1.2 parser, so both get line numbers), and checks it against the schema. Every problem says
// the file, the line and what is wrong, so an operator can fix it without reading code.
import * as v from 'valibot';
import { isCollection, isNode, isPair, LineCounter, parseDocument, type Document } from 'yaml';
import { ServiceDefinitionSchema, type ServiceDefinition } from './definition.js';

/** One thing wrong in a definition file. `path` is where in the document (`states.askName.next`). */
export interface Problem {
  file: string;
  line: number;
  path: string;
  message: string;
}

export type Parsed =
  | { ok: true; definition: ServiceDefinition; lineOf: (path: readonly (string | number)[]) => number }
  | { ok: false; problems: Problem[] };

/** The file names a services directory may hold. */
export const DEFINITION_FILE = /\.(ya?ml|json)$/i;

/** Parses and shape-checks one definition. `file` is only used in the problems. */
export function parseServiceText(text: string, file: string): Parsed {
  const lines = new LineCounter();
  const document = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  if (document.errors.length > 0) {
    // The first syntax error; the ones after it are mostly its echoes.
    return {
      ok: false,
      problems: document.errors.slice(0, 1).map((error) => ({
        file,
        line: lines.linePos(error.pos[0]).line || 1,
        path: '',
        message: error.message.split('\n')[0] ?? error.message,
      })),
    };
  }
  const lineOf = (path: readonly (string | number)[]) => lineAt(document, lines, path);
  const result = v.safeParse(ServiceDefinitionSchema, document.toJS({ maxAliasCount: 100 }));
  if (result.success) return { ok: true, definition: result.output, lineOf };
  return { ok: false, problems: result.issues.map((issue) => problemOf(issue, file, lineOf)) };
}

function problemOf(issue: v.BaseIssue<unknown>, file: string, lineOf: (path: (string | number)[]) => number): Problem {
  const path = (issue.path ?? []).map((item) => item.key as string | number);
  // A union's own message ("Invalid type") says little: the most specific nested issue says what is wrong.
  const nested = issue.issues?.find((inner) => (inner.path?.length ?? 0) > path.length) ?? issue.issues?.[0];
  const message = nested && issue.type === 'union' && /^Invalid/.test(issue.message) ? nested.message : issue.message;
  return { file, line: lineOf(path), path: path.join('.'), message: wording(issue, message) };
}

/** valibot's "Invalid key: Expected never but received "x"" from a strict object, said plainly. */
function wording(issue: v.BaseIssue<unknown>, message: string): string {
  if (issue.expected === 'never' && issue.path?.length) return `unknown field ${issue.received}`;
  if (issue.kind === 'schema' && issue.received === 'undefined') return `is required (${message})`;
  return message;
}

/** The line of the deepest node of `path` the document has (1 when it has none of it). */
function lineAt(document: Document, lines: LineCounter, path: readonly (string | number)[]): number {
  let node: unknown = document.contents;
  let offset = isNode(node) ? (node.range?.[0] ?? 0) : 0;
  for (const key of path) {
    if (!isCollection(node)) break;
    const pair = isCollection(node)
      ? node.items.find((item, index) => (isPair(item) ? keyOf(item.key) === String(key) : index === key))
      : undefined;
    if (pair === undefined) break;
    const target = isPair(pair) ? pair : undefined;
    const keyNode = target && isNode(target.key) ? target.key : undefined;
    node = target ? target.value : pair;
    offset = (keyNode ?? (isNode(node) ? node : undefined))?.range?.[0] ?? offset;
  }
  return lines.linePos(offset).line || 1;
}

function keyOf(key: unknown): string {
  return isNode(key) && 'value' in key ? String((key as { value: unknown }).value) : String(key);
}
