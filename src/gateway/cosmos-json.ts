// Thread: main
// Decoded protobufjs message -> JSON exactly as Cosmos REST renders it (grpc-gateway v1 with gogoproto
// jsonpb, OrigName + EmitDefaults): declared names in declaration order, defaults emitted, 64-bit integers
// as strings, enums by name, RFC 3339 timestamps, "1.500s" durations, base64 bytes (empty -> null), Any
// with "@type", only the set member of a oneof, unset messages -> null, and the gogoproto options that
// change the JSON (gogo-options.ts: customtype decimals, nullable=false). protobufjs's toObject and its
// protojson extension implement the proto3 JSON mapping instead (camelCase names, defaults omitted).
import { isRealOneof, isWrapper } from './fields.js';
import { customJson, gogoFieldOf } from './gogo-options.js';
import { protobuf } from './proto-root.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
// biome-ignore lint/suspicious/noExplicitAny: protobufjs messages: fields are read by the names the descriptors give at run time
type Message = Record<string, any>;
// biome-ignore lint/suspicious/noExplicitAny: a field writer takes whatever protobufjs decoded for that field
type ValueOf = (value: any) => Json;
type Write = (message: Message, out: Record<string, Json>) => void;

const EMPTY = new Uint8Array(0);
/** time.Time{} through gogo jsonpb. */
const GO_ZERO_TIME = '0001-01-01T00:00:00Z';

const has = (message: Message, name: string) => Object.hasOwn(message, name) && message[name] != null;

export class CosmosJson {
  readonly #plans = new WeakMap<protobuf.Type, (message: Message) => Json>();

  readonly #roots: readonly protobuf.Root[];

  /** The roots resolve the types named by `Any` values, the first that has one wins. */
  constructor(root: protobuf.Root, ...more: protobuf.Root[]) {
    this.#roots = [root, ...more];
  }

  /** The JSON value of a message (null when unset). */
  message(type: protobuf.Type, message: Message | null | undefined): Json {
    if (message == null) return null;
    return this.#planOf(type)(message);
  }

  /** The JSON text of a message. */
  stringify(type: protobuf.Type, message: Message): string {
    return JSON.stringify(this.message(type, message));
  }

  #planOf(type: protobuf.Type): (message: Message) => Json {
    let plan = this.#plans.get(type);
    if (!plan) {
      plan = this.#wellKnown(type) ?? this.#objectPlan(type);
      this.#plans.set(type, plan);
    }
    return plan;
  }

  #objectPlan(type: protobuf.Type): (message: Message) => Json {
    let writers: Write[] | undefined;
    return (message) => {
      // Built on first use: recursive types would otherwise recurse while planning.
      writers ??= this.#writers(type);
      const out: Record<string, Json> = {};
      for (const write of writers) write(message, out);
      return out;
    };
  }

  #writers(type: protobuf.Type): Write[] {
    const writers: Write[] = [];
    const oneofsDone = new Set<protobuf.OneOf>();
    for (const field of type.fieldsArray) {
      field.resolve();
      const name = field.name;
      const oneof = field.partOf;
      if (isRealOneof(oneof)) {
        // The set member is written where the oneof is declared; unset oneofs are left out.
        if (oneofsDone.has(oneof)) continue;
        oneofsDone.add(oneof);
        const members = oneof.fieldsArray.map(
          (member) => [member.name, this.#valueOf(member.resolve(), true)] as const,
        );
        writers.push((message, out) => {
          for (const [member, writeValue] of members) {
            if (has(message, member)) {
              out[member] = writeValue(message[member]);
              return;
            }
          }
        });
      } else if (field.map) {
        const writeValue = this.#valueOf(field, false);
        const keyOf = mapKey(field as unknown as protobuf.MapField);
        writers.push((message, out) => {
          const map = message[name] ?? {};
          const object: Record<string, Json> = {};
          for (const key of Object.keys(map)) object[keyOf(key)] = writeValue(map[key]);
          out[name] = object;
        });
      } else if (field.repeated) {
        const writeValue = this.#valueOf(field, false);
        writers.push((message, out) => {
          const list: unknown[] = message[name] ?? [];
          const array: Json[] = new Array(list.length);
          for (let i = 0; i < list.length; i++) array[i] = writeValue(list[i]);
          out[name] = array;
        });
      } else if (oneof) {
        const writeValue = this.#valueOf(field, true);
        writers.push((message, out) => {
          out[name] = has(message, name) ? writeValue(message[name]) : null;
        });
      } else {
        const writeValue = this.#valueOf(field, true);
        const absent = this.#absentValue(field);
        writers.push(
          absent === undefined
            ? (message, out) => {
                out[name] = writeValue(message[name]);
              }
            : (message, out) => {
                out[name] = has(message, name) ? writeValue(message[name]) : absent();
              },
        );
      }
    }
    return writers;
  }

  /**
   * A `(gogoproto.nullable) = false` message field is a Go struct value, never nil: absent, it renders as
   * the empty message (a stdtime timestamp as Go's zero time). Undefined: absent renders as usual.
   */
  #absentValue(field: protobuf.Field): (() => Json) | undefined {
    const resolved = field.resolvedType;
    const gogo = gogoFieldOf(field);
    if (!(resolved instanceof protobuf.Type) || !gogo.nonNullable) return undefined;
    if (gogo.stdtime && resolved.fullName === '.google.protobuf.Timestamp') return () => GO_ZERO_TIME;
    return () => this.message(resolved, resolved.decode(EMPTY));
  }

  /** One value of a field. `singular`: empty bytes render as null (gogoproto nil slices). */
  #valueOf(field: protobuf.Field, singular: boolean): ValueOf {
    const resolved = field.resolvedType;
    const gogo = gogoFieldOf(field);
    if (gogo.custom && !resolved) return customJson(gogo.custom, singular && !gogo.nonNullable);
    if (resolved instanceof protobuf.Type) return (value) => this.message(resolved, value);
    if (resolved instanceof protobuf.Enum) {
      return (value) => resolved.valuesById[value] ?? value;
    }
    return scalarWriter(field.type, singular);
  }

  #wellKnown(type: protobuf.Type): ((message: Message) => Json) | undefined {
    switch (type.fullName) {
      case '.google.protobuf.Timestamp':
        return timestamp;
      case '.google.protobuf.Duration':
        return duration;
      case '.google.protobuf.Any':
        return (message) => this.#any(message);
      case '.google.protobuf.Empty':
        return () => ({});
      case '.google.protobuf.FieldMask':
        return (message) => ((message.paths ?? []) as string[]).map(protobuf.util.camelCase).join(',');
      case '.google.protobuf.Struct':
        return (message) => {
          const object: Record<string, Json> = {};
          const fields = message.fields ?? {};
          for (const key of Object.keys(fields))
            object[key] = this.message(type.fields.fields.resolve().resolvedType as protobuf.Type, fields[key]);
          return object;
        };
      case '.google.protobuf.ListValue':
        return (message) =>
          ((message.values ?? []) as Message[]).map((value) =>
            this.message(type.fields.values.resolve().resolvedType as protobuf.Type, value),
          );
      case '.google.protobuf.Value':
        return (message) => this.#value(type, message);
    }
    if (isWrapper(type)) {
      const writeValue = scalarWriter(type.fields.value.type, false);
      return (message) => writeValue(message.value);
    }
    return undefined;
  }

  /** google.protobuf.Value; protobufjs's bundled struct.proto names its fields in camelCase, descriptors in snake_case. */
  #value(type: protobuf.Type, message: Message): Json {
    const member = (name: string) => type.fields[name] ?? type.fields[protobuf.util.camelCase(name)];
    for (const name of ['number_value', 'string_value', 'bool_value', 'struct_value', 'list_value']) {
      const field = member(name);
      if (field && has(message, field.name)) {
        const resolved = field.resolve().resolvedType;
        const value = message[field.name];
        return resolved instanceof protobuf.Type
          ? this.message(resolved, value)
          : name === 'number_value'
            ? number(value)
            : value;
      }
    }
    return null;
  }

  /** `{ "@type": url, ...fields }`; a well-known inner type goes under "value"; an unknown type keeps its bytes. */
  #any(message: Message): Json {
    const url: string = message.type_url ?? '';
    const bytes: Uint8Array | undefined = message.value;
    const name = url.slice(url.lastIndexOf('/') + 1);
    let inner: protobuf.ReflectionObject | null = null;
    for (const root of url ? this.#roots : []) if ((inner = root.lookup(name))) break;
    if (inner instanceof protobuf.Type) {
      let decoded: Message | undefined;
      try {
        decoded = inner.decode(bytes ?? new Uint8Array(0));
      } catch {
        decoded = undefined;
      }
      if (decoded) {
        const json = this.message(inner, decoded);
        if (this.#wellKnown(inner)) return { '@type': url, value: json };
        return { '@type': url, ...(json as Record<string, Json>) };
      }
    }
    return { '@type': url, value: base64(bytes, true) };
  }
}

function scalarWriter(type: string, singular: boolean): ValueOf {
  switch (type) {
    case 'int64':
    case 'uint64':
    case 'sint64':
    case 'fixed64':
    case 'sfixed64':
      return (value) => (value == null ? '0' : typeof value === 'number' ? String(value) : value.toString());
    case 'float':
      return float32;
    case 'double':
      return number;
    case 'bytes':
      return (value) => base64(value, singular);
    default:
      return (value) => value;
  }
}

function mapKey(field: protobuf.MapField): (key: string) => string {
  if (field.keyType.endsWith('64')) {
    const unsigned = field.keyType === 'uint64' || field.keyType === 'fixed64';
    // protobufjs keys 64-bit maps by an 8-character hash of the Long.
    return (key) => (key.length === 8 ? protobuf.util.LongBits.fromHash(key).toLong(unsigned).toString() : key);
  }
  return (key) => key;
}

function base64(value: Uint8Array | null | undefined, emptyIsNull: boolean): string | null {
  if (!value || value.length === 0) return emptyIsNull ? null : '';
  return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64');
}

function number(value: number): Json {
  if (Number.isFinite(value)) return value;
  return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
}

/** A float field holds a float32; print the shortest decimal that reads back as the same float32 (as Go does). */
function float32(value: number): Json {
  if (!Number.isFinite(value) || value === 0) return number(value);
  for (let precision = 1; precision < 10; precision++) {
    const candidate = Number(value.toPrecision(precision));
    if (Math.fround(candidate) === value) return candidate;
  }
  return value;
}

function toNumber(value: unknown): number {
  if (value == null) return 0;
  if (typeof value === 'number') return value;
  const long = value as { toNumber?: () => number };
  return typeof long.toNumber === 'function' ? long.toNumber() : Number(String(value));
}

const TWO_DIGITS = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));

/** Nanoseconds as 0, 3, 6 or 9 fraction digits, as Go's jsonpb writes them. */
function fraction(nanos: number): string {
  if (nanos === 0) return '';
  const digits = String(nanos).padStart(9, '0');
  if (digits.endsWith('000000')) return `.${digits.slice(0, 3)}`;
  if (digits.endsWith('000')) return `.${digits.slice(0, 6)}`;
  return `.${digits}`;
}

/**
 * RFC 3339 in UTC. Written out by hand (days -> civil date, H. Hinnant's algorithm): Date#toISOString
 * was most of the transcoding time of a list answer.
 */
function timestamp(message: Message): Json {
  const seconds = toNumber(message.seconds);
  const days = Math.floor(seconds / 86400);
  const secondOfDay = seconds - days * 86400;
  const shifted = days + 719468;
  const era = Math.floor(shifted / 146097);
  const dayOfEra = shifted - era * 146097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36524) - Math.floor(dayOfEra / 146096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthIndex = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthIndex + 2) / 5) + 1;
  const month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hour = Math.floor(secondOfDay / 3600);
  const minute = Math.floor((secondOfDay % 3600) / 60);
  return (
    `${String(year).padStart(4, '0')}-${TWO_DIGITS[month]}-${TWO_DIGITS[day]}T` +
    `${TWO_DIGITS[hour]}:${TWO_DIGITS[minute]}:${TWO_DIGITS[secondOfDay % 60]}${fraction(message.nanos ?? 0)}Z`
  );
}

function duration(message: Message): Json {
  const seconds = BigInt(message.seconds == null ? 0 : message.seconds.toString());
  const nanos: number = message.nanos ?? 0;
  const negative = seconds < 0n || nanos < 0;
  const abs = seconds < 0n ? -seconds : seconds;
  return `${negative ? '-' : ''}${abs}${fraction(Math.abs(nanos))}s`;
}
