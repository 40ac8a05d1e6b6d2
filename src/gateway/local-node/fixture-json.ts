// Thread: main
// The fixture holds records as a node's REST shows them; a few values differ on the wire. The
// 18-decimal customtype strings ("0.100000000000000000") are stored as the scaled integer the chain
// keeps ("100000000000000000"), so the gateway renders them back exactly as a node does.
import { gogoFieldOf, parseDec } from '../gogo-options.js';
import { protobuf } from '../proto-root.js';

// biome-ignore lint/suspicious/noExplicitAny: fixture JSON of any protobuf message, walked by its descriptor
type Json = any;

/** A copy of `json` (REST form of `type`) with customtype decimals in wire form. */
export function restToWireJson(type: protobuf.Type, json: Json): Json {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return json;
  const out: Record<string, Json> = { ...json };
  for (const field of type.fieldsArray) {
    const value = out[field.name];
    if (value == null) continue;
    const resolved = field.resolve().resolvedType;
    const convert =
      resolved instanceof protobuf.Type && !field.map
        ? (item: Json) => restToWireJson(resolved, item)
        : gogoFieldOf(field).custom === 'dec'
          ? (item: Json) => (typeof item === 'string' ? parseDec(item) : item)
          : undefined;
    if (convert) out[field.name] = Array.isArray(value) ? value.map(convert) : convert(value);
  }
  return out;
}
