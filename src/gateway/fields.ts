// Thread: main
// Field lookups over protobufjs reflection shared by the query mapping, the transcoder and OpenAPI.
import { protobuf } from './proto-root.js';

const jsonIndexes = new WeakMap<protobuf.Type, Map<string, protobuf.Field>>();

/** A field by its proto name or its JSON (lowerCamel) name. */
export function fieldByName(type: protobuf.Type, name: string): protobuf.Field | undefined {
  // `fields` is a plain object: a query key like `constructor` must not find its prototype's members.
  if (Object.hasOwn(type.fields, name)) return type.fields[name];
  let index = jsonIndexes.get(type);
  if (!index) {
    index = new Map(type.fieldsArray.map((field) => [field.jsonName ?? field.name, field]));
    jsonIndexes.set(type, index);
  }
  return index.get(name);
}

/** The fields along a dotted path (`pagination.count_total` or `pagination.countTotal`), or undefined. */
export function resolveFieldPath(type: protobuf.Type, path: readonly string[]): protobuf.Field[] | undefined {
  const fields: protobuf.Field[] = [];
  let current: protobuf.Type | undefined = type;
  for (const name of path) {
    const field: protobuf.Field | undefined = current && fieldByName(current, name);
    if (!field) return undefined;
    fields.push(field);
    const resolved: protobuf.Type | protobuf.Enum | null = field.resolve().resolvedType;
    current = resolved instanceof protobuf.Type ? resolved : undefined;
  }
  return fields;
}

/** proto3 `optional` fields sit in a one-member "synthetic" oneof that is not a real choice. */
export function isRealOneof(oneof: protobuf.OneOf | null | undefined): oneof is protobuf.OneOf {
  return !!oneof && !(oneof.fieldsArray.length === 1 && oneof.name === `_${oneof.fieldsArray[0].name}`);
}

/** google.protobuf.DoubleValue, StringValue, ...: one `value` field, rendered and parsed as the bare value. */
export function isWrapper(type: protobuf.Type): boolean {
  return (
    type.fullName.startsWith('.google.protobuf.') &&
    type.name.endsWith('Value') &&
    type.fieldsArray.length === 1 &&
    !!type.fields.value
  );
}
