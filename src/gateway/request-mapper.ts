// Thread: main
// Builds the gRPC request of a route from its path variables and query string (grpc-gateway v1 rules):
// dotted field paths with proto or JSON names, typed parsing, repeated keys fill repeated fields, first
// value wins for singular fields, unknown keys are ignored, path-bound fields are not read from the query.
import { gatewayErrors } from './errors.js';
import { isRealOneof, resolveFieldPath } from './fields.js';
import type { protobuf } from './proto-root.js';
import { ParseError, parseFieldValue } from './scalar-parse.js';

type Target = Record<string, unknown>;
const CACHE_LIMIT = 512;

export class RequestMapper {
  readonly #pathFields = new Map<string, protobuf.Field[]>();
  readonly #boundKeys = new Set<string>();
  /** Query key -> field path (null: unknown key, or a field bound by the path). Bounded, since keys come from clients. */
  readonly #queryKeys = new Map<string, protobuf.Field[] | null>();

  /** Throws when a template variable names no singular value field of the request. */
  constructor(
    readonly type: protobuf.Type,
    pathVariables: readonly (readonly string[])[],
  ) {
    for (const path of pathVariables) {
      const fields = resolveFieldPath(type, path);
      const leaf = fields?.[fields.length - 1];
      if (!fields || !leaf || leaf.repeated || leaf.map) {
        throw new Error(`path variable ${path.join('.')} is not a singular field of ${type.fullName.slice(1)}`);
      }
      this.#pathFields.set(path.join('.'), fields);
      this.#boundKeys.add(fields.map((field) => field.name).join('.'));
    }
    this.#emptyRequest = type.encode(type.create()).finish();
  }

  /** The request's wire bytes when nothing sets a field (no path variables, no known query key): encoded once. */
  readonly #emptyRequest: Uint8Array;

  /** The request as protobuf wire bytes; a value that does not parse is a 400 (INVALID_ARGUMENT). */
  encode(bound: ReadonlyMap<string, string>, rawQuery: string): Uint8Array {
    const message = this.build(bound, rawQuery);
    return message ? this.type.encode(message).finish() : this.#emptyRequest;
  }

  /** The request as a message object, or undefined when nothing sets a field (an empty request). */
  build(bound: ReadonlyMap<string, string>, rawQuery: string): protobuf.Message | undefined {
    const object: Target = {};
    let assigned = bound.size > 0;
    let key = '';
    try {
      for (const [path, raw] of bound) {
        key = path;
        assign(object, this.#pathFields.get(path)!, raw);
      }
      if (rawQuery) {
        for (const [name, raw] of new URLSearchParams(rawQuery)) {
          key = name;
          const fields = this.#resolveQueryKey(name);
          if (fields) {
            assign(object, fields, raw);
            assigned = true;
          }
        }
      }
      return assigned ? this.type.fromObject(object) : undefined;
    } catch (error) {
      if (error instanceof ParseError) throw gatewayErrors.invalidArgument(`parsing field "${key}": ${error.message}`);
      throw error;
    }
  }

  #resolveQueryKey(name: string): protobuf.Field[] | null {
    let fields = this.#queryKeys.get(name);
    if (fields === undefined) {
      fields = resolveFieldPath(this.type, name.split('.')) ?? null;
      if (fields && this.#boundKeys.has(fields.map((field) => field.name).join('.'))) fields = null;
      if (this.#queryKeys.size < CACHE_LIMIT) this.#queryKeys.set(name, fields);
    }
    return fields;
  }
}

function assign(object: Target, fields: readonly protobuf.Field[], raw: string): void {
  let target = object;
  for (let i = 0; i < fields.length - 1; i++) {
    const field = fields[i];
    if (field.repeated || field.map)
      throw new ParseError(`${field.name} is a repeated field: its members cannot be set by name`);
    claimOneof(target, field);
    target = (target[field.name] ??= {}) as Target;
  }
  const leaf = fields[fields.length - 1];
  if (leaf.map) throw new ParseError('map fields cannot be set from the query');
  const value = parseFieldValue(leaf, raw);
  if (leaf.repeated) {
    ((target[leaf.name] ??= []) as unknown[]).push(value);
  } else if (!(leaf.name in target)) {
    claimOneof(target, leaf);
    target[leaf.name] = value;
  }
}

/** Two members of one oneof in the same request is an error, as in grpc-gateway. */
function claimOneof(target: Target, field: protobuf.Field): void {
  const oneof = field.partOf;
  if (!isRealOneof(oneof)) return;
  for (const member of oneof.oneof) {
    if (member !== field.name && member in target) {
      throw new ParseError(`${field.name} and ${member} are members of the same oneof ${oneof.name}`);
    }
  }
}
