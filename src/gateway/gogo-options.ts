// Thread: main
// The gogoproto field options that change what a Cosmos node's REST answers look like. gogoproto generates
// Go types from them, and gogo jsonpb renders those types:
// - customtype LegacyDec/Dec: the wire holds the scaled integer ("100000000000000000"), the JSON the
//   18-decimal text ("0.100000000000000000"); customtype Int/Uint: the integer, "0" when empty;
//   a nullable customtype that is absent is null.
// - nullable=false on a message field: never null; an absent value renders as the empty message, and a
//   stdtime timestamp as Go's zero time.
// Other options (customname, casttype, castrepeated, embed, ...) only change Go code, not the JSON.
// Options are kept on protobufjs fields under their .proto spelling, `(gogoproto.customtype)`, whether they
// were parsed from a .proto file or copied from a node's descriptors.
import { protobuf } from './proto-root.js';

/** The field options read from descriptors, by extension name (FieldOptions decoded with gogo.proto loaded). */
export const GOGO_FIELD_OPTIONS = [
  'nullable',
  'embed',
  'customtype',
  'customname',
  'casttype',
  'stdtime',
  'stdduration',
  'castrepeated',
] as const;

export type CustomKind = 'dec' | 'int';

export interface GogoField {
  /** How a customtype scalar renders, when it is one the JSON depends on. */
  readonly custom?: CustomKind;
  /** `(gogoproto.nullable) = false`. */
  readonly nonNullable: boolean;
  readonly stdtime: boolean;
}

const DECIMALS = 18;

export function gogoFieldOf(field: protobuf.Field): GogoField {
  const options = field.options ?? {};
  const customtype = options['(gogoproto.customtype)'];
  return {
    custom: typeof customtype === 'string' ? customKind(customtype) : undefined,
    nonNullable: options['(gogoproto.nullable)'] === false,
    stdtime: options['(gogoproto.stdtime)'] === true,
  };
}

/** `cosmossdk.io/math.LegacyDec`, `github.com/cosmos/cosmos-sdk/types.Dec`, `LegacyDec` (same package) ... */
function customKind(customtype: string): CustomKind | undefined {
  const name = customtype.slice(customtype.lastIndexOf('.') + 1);
  if (name === 'LegacyDec' || name === 'Dec') return 'dec';
  if (name === 'Int' || name === 'Uint') return 'int';
  return undefined;
}

/** A customtype value as a node's REST shows it; the wire value may be a string or (bytes fields) its UTF-8. */
export function customJson(kind: CustomKind, nullable: boolean): (value: unknown) => string | null {
  return (value) => {
    const text =
      typeof value === 'string' ? value : value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : '';
    if (text === '') return nullable ? null : kind === 'dec' ? formatDec('0') : '0';
    return kind === 'dec' ? formatDec(text) : text;
  };
}

/** Scaled integer -> 18-decimal text, as LegacyDec.String() writes it. Anything else is passed through. */
export function formatDec(scaled: string): string {
  const match = /^(-?)(\d+)$/.exec(scaled);
  if (!match) return scaled;
  const digits = match[2].replace(/^0+(?=\d)/, '').padStart(DECIMALS + 1, '0');
  return `${match[1]}${digits.slice(0, -DECIMALS)}.${digits.slice(-DECIMALS)}`;
}

/** 18-decimal text ("0.1", "12", "-0.05") -> the scaled integer the wire holds; throws on anything else. */
export function parseDec(text: string): string {
  const match = /^(-?)(\d+)(?:\.(\d{1,18}))?$/.exec(text);
  if (!match) throw new Error(`${JSON.stringify(text)} is not a decimal with at most 18 fraction digits`);
  const scaled = `${match[2]}${(match[3] ?? '').padEnd(DECIMALS, '0')}`.replace(/^0+(?=\d)/, '');
  return scaled === '0' ? '0' : `${match[1]}${scaled}`;
}

interface DescriptorField {
  name: string;
  options?: unknown;
}
interface DescriptorMessage {
  name: string;
  field?: DescriptorField[];
  nested_type?: DescriptorMessage[];
}

/** gogoproto options of a descriptor field (FieldOptions decoded with the extensions), in .proto spelling. */
function fromDescriptorOptions(given: unknown): [string, unknown][] {
  if (!given) return [];
  const options = given as Record<string, unknown>;
  const found: [string, unknown][] = [];
  for (const name of GOGO_FIELD_OPTIONS) {
    // Only options the file sets: decoded proto2 messages answer defaults for the others.
    const key = `.gogoproto.${name}`;
    if (Object.hasOwn(options, key) && options[key] != null) found.push([`(gogoproto.${name})`, options[key]]);
  }
  return found;
}

/** Copies the gogoproto options of a file's messages (descriptor form) onto the root's fields. */
export function applyDescriptorOptions(
  root: protobuf.Root,
  pkg: string,
  messages: readonly DescriptorMessage[] | undefined,
): void {
  const walk = (scope: string, message: DescriptorMessage) => {
    const name = `${scope}.${message.name}`;
    const type = root.lookup(name);
    if (type instanceof protobuf.Type) {
      for (const field of message.field ?? []) {
        for (const [option, value] of fromDescriptorOptions(field.options))
          type.fields[field.name]?.setOption(option, value);
      }
    }
    for (const nested of message.nested_type ?? []) walk(name, nested);
  };
  for (const message of messages ?? []) walk(pkg ? `.${pkg}` : '', message);
}

/** The gogoproto options of a protobufjs field in descriptor form (`.gogoproto.nullable`), for FieldOptions. */
export function toDescriptorOptions(field: protobuf.Field): Record<string, unknown> | undefined {
  let found: Record<string, unknown> | undefined;
  for (const name of GOGO_FIELD_OPTIONS) {
    const value = field.options?.[`(gogoproto.${name})`];
    if (value !== undefined) (found ??= {})[`.gogoproto.${name}`] = value;
  }
  return found;
}
