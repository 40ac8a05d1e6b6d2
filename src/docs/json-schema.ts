// Thread: main
// valibot -> JSON Schema 2020-12 (the dialect of OpenAPI 3.1). Definitions of recursive schemas are moved
// into components.schemas: a `#/$defs/...` reference inside an OpenAPI document would point at its root.
import type * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';

export type JsonObject = Record<string, unknown>;

/**
 * Requests are documented as the client sends them (`input`: before transforms), answers as the server
 * sends them (`output`). Actions with no JSON Schema form (transforms, custom checks) are left out, not fatal.
 */
export type Direction = 'input' | 'output';

export class SchemaConverter {
  /** Shared components.schemas of the document being built. */
  constructor(private readonly components: JsonObject) {}

  convert(schema: v.GenericSchema, direction: Direction): JsonObject {
    const {
      $schema: _dialect,
      $defs,
      ...json
    } = toJsonSchema(schema, {
      target: 'draft-2020-12',
      typeMode: direction,
      errorMode: 'ignore',
    }) as JsonObject;
    if (!$defs || typeof $defs !== 'object') return json;
    const refs = new Map<string, string>();
    const names = new Map<string, string>();
    for (const name of Object.keys($defs)) {
      const unique = this.#uniqueName(name);
      names.set(name, unique);
      refs.set(`#/$defs/${name}`, `#/components/schemas/${unique}`);
      this.components[unique] = {}; // reserve the name before the next one is chosen
    }
    for (const [name, definition] of Object.entries($defs as JsonObject)) {
      this.components[names.get(name)!] = rewriteRefs(definition, refs);
    }
    return rewriteRefs(json, refs) as JsonObject;
  }

  #uniqueName(name: string): string {
    // components.schemas keys must match ^[a-zA-Z0-9.\-_]+$; generated definition names are bare numbers.
    const base = /^\d+$/.test(name) ? 'Definition' : name.replace(/[^a-zA-Z0-9._-]/g, '_');
    if (!(base in this.components) && base !== 'Definition') return base;
    let n = 1;
    while (`${base}${n}` in this.components) n++;
    return `${base}${n}`;
  }
}

function rewriteRefs(node: unknown, refs: ReadonlyMap<string, string>): unknown {
  if (Array.isArray(node)) return node.map((item) => rewriteRefs(item, refs));
  if (typeof node !== 'object' || node === null) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = key === '$ref' && typeof value === 'string' ? (refs.get(value) ?? value) : rewriteRefs(value, refs);
  }
  return out;
}
