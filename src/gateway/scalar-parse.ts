// Thread: main
// Text -> field value, for path variables and query parameters, the way grpc-gateway v1 parses them
// (Go strconv with base 0 for integers, ParseBool for bools, standard then URL-safe base64 for bytes).
import protojson from 'protobufjs/ext/protojson.js';
import { isWrapper } from './fields.js';
import { protobuf } from './proto-root.js';

export class ParseError extends Error {}

const INT_RANGES = {
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
} as const;

const INTEGER_SYNTAX =
  /^([+-]?)(0[xX]_?[0-9a-fA-F]+(?:_[0-9a-fA-F]+)*|0[oO]_?[0-7]+(?:_[0-7]+)*|0[bB]_?[01]+(?:_[01]+)*|0_?[0-7]+(?:_[0-7]+)*|0|[1-9][0-9]*(?:_[0-9]+)*)$/;

const INTEGER_KIND: Readonly<Record<string, keyof typeof INT_RANGES>> = {
  int32: 'int32',
  sint32: 'int32',
  sfixed32: 'int32',
  uint32: 'uint32',
  fixed32: 'uint32',
  int64: 'int64',
  sint64: 'int64',
  sfixed64: 'int64',
  uint64: 'uint64',
  fixed64: 'uint64',
};

const BOOLS: Readonly<Record<string, boolean>> = {
  1: true,
  t: true,
  T: true,
  true: true,
  TRUE: true,
  True: true,
  0: false,
  f: false,
  F: false,
  false: false,
  FALSE: false,
  False: false,
};

/** Parses one text value for a (singular view of a) field; throws ParseError. */
export function parseFieldValue(field: protobuf.Field, raw: string): unknown {
  const resolved = field.resolve().resolvedType;
  if (resolved instanceof protobuf.Enum) return parseEnum(resolved, raw);
  if (resolved instanceof protobuf.Type) return parseWellKnown(resolved, raw);
  return parseScalar(field.type, raw);
}

export function parseScalar(type: string, raw: string): unknown {
  const kind = INTEGER_KIND[type];
  if (kind) {
    const value = parseInteger(raw, kind);
    // 64-bit values stay decimal strings: protobufjs turns them into Longs without losing precision.
    return kind === 'int64' || kind === 'uint64' ? value.toString() : Number(value);
  }
  switch (type) {
    case 'string':
      return raw;
    case 'bool':
      if (raw in BOOLS) return BOOLS[raw];
      throw new ParseError(`invalid bool ${JSON.stringify(raw)}`);
    case 'double':
    case 'float':
      return parseFloatValue(raw, type);
    case 'bytes':
      return parseBase64(raw);
    default:
      throw new ParseError(`unsupported field type ${type}`);
  }
}

/** Go strconv.ParseInt/ParseUint with base 0: decimal, 0x hex, 0o / leading-0 octal, 0b binary, `_` separators. */
export function parseInteger(raw: string, kind: keyof typeof INT_RANGES): bigint {
  const match = INTEGER_SYNTAX.exec(raw);
  if (!match || ((kind === 'uint32' || kind === 'uint64') && match[1]))
    throw new ParseError(`invalid ${kind} ${JSON.stringify(raw)}`);
  let digits = match[2].replaceAll('_', '');
  if (/^0[0-7]+$/.test(digits)) digits = `0o${digits.slice(1)}`;
  const value = match[1] === '-' ? -BigInt(digits) : BigInt(digits);
  const [min, max] = INT_RANGES[kind];
  if (value < min || value > max) throw new ParseError(`${kind} ${JSON.stringify(raw)} out of range`);
  return value;
}

const FLOAT = /^[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)$/i;
const FLOAT32_MAX = 3.4028234663852886e38;

function parseFloatValue(raw: string, type: 'float' | 'double'): number {
  if (!FLOAT.test(raw)) throw new ParseError(`invalid ${type} ${JSON.stringify(raw)}`);
  const lower = raw.toLowerCase().replace(/^\+/, '');
  const value = lower.endsWith('nan')
    ? NaN
    : lower.endsWith('inf') || lower.endsWith('infinity')
      ? lower.startsWith('-')
        ? -Infinity
        : Infinity
      : Number(raw);
  const limit = type === 'float' ? FLOAT32_MAX : Number.MAX_VALUE;
  if (Number.isFinite(value) && Math.abs(value) > limit)
    throw new ParseError(`${type} ${JSON.stringify(raw)} out of range`);
  return value;
}

const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const URL_BASE64 = /^[A-Za-z0-9_-]*={0,2}$/;

export function parseBase64(raw: string): Buffer {
  if (STD_BASE64.test(raw)) return Buffer.from(raw, 'base64');
  if (URL_BASE64.test(raw) && raw.replace(/=+$/, '').length % 4 !== 1) return Buffer.from(raw, 'base64url');
  throw new ParseError(`invalid base64 ${JSON.stringify(raw)}`);
}

function parseEnum(type: protobuf.Enum, raw: string): number {
  if (Object.hasOwn(type.values, raw)) return type.values[raw];
  let number: bigint | undefined;
  try {
    number = parseInteger(raw, 'int32');
  } catch {
    number = undefined;
  }
  if (number !== undefined && type.valuesById[Number(number)] !== undefined) return Number(number);
  throw new ParseError(`${JSON.stringify(raw)} is not a value of enum ${type.fullName.slice(1)}`);
}

/** Timestamp (RFC 3339), Duration ("1.5s"), FieldMask and the wrapper types can come from text too. */
function parseWellKnown(type: protobuf.Type, raw: string): unknown {
  const name = type.fullName;
  if (isWrapper(type)) {
    return { value: parseScalar(type.fields.value.type, raw) };
  }
  if (
    name === '.google.protobuf.Timestamp' ||
    name === '.google.protobuf.Duration' ||
    name === '.google.protobuf.FieldMask'
  ) {
    try {
      return protojson.fromJson(type, raw);
    } catch (error) {
      throw new ParseError(`invalid ${type.name} ${JSON.stringify(raw)}: ${(error as Error).message}`);
    }
  }
  throw new ParseError(`a ${name.slice(1)} message cannot be set from a text value`);
}
