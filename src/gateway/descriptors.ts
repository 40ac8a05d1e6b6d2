// Thread: main
// The gateway's schema: the protobufjs root and the query methods with their GET templates, from the
// bundled .proto files or from FileDescriptorProtos (a node's reflection service). The inverse,
// fileDescriptorsOf, lets the embedded node serve its own descriptors the way a chain node does.
import { descriptor, getDescriptorTypes, loadProtoFiles, BUNDLED_FILES, protobuf } from './proto-root.js';
import { applyDescriptorOptions, toDescriptorOptions } from './gogo-options.js';
import { getPatterns, normalizeRule, ruleFromParsedOptions, type HttpRule } from './http-rule.js';

export interface QueryMethod {
  /** `/ixo.entity.v1beta1.Query/Entity` */
  readonly grpcPath: string;
  readonly service: protobuf.Service;
  readonly method: protobuf.Method;
  readonly requestType: protobuf.Type;
  readonly responseType: protobuf.Type;
  /** GET path templates from the `google.api.http` option, the main one first. */
  readonly patterns: readonly string[];
}

export interface GatewaySchema {
  readonly root: protobuf.Root;
  /** Further roots some methods' types live in (bundled fallbacks beside a node's descriptors). */
  readonly roots?: readonly protobuf.Root[];
  /** Unary methods in declaration order (the order routes are tried in). */
  readonly methods: readonly QueryMethod[];
}

type RuleOf = (method: protobuf.Method) => HttpRule | undefined;

/** Every service of a root, depth first in declaration order. */
export function servicesOf(namespace: protobuf.NamespaceBase): protobuf.Service[] {
  const found: protobuf.Service[] = [];
  for (const nested of namespace.nestedArray) {
    if (nested instanceof protobuf.Service) found.push(nested);
    else if (nested instanceof protobuf.Namespace && !(nested instanceof protobuf.Type))
      found.push(...servicesOf(nested));
  }
  return found;
}

export function schemaFromRoot(root: protobuf.Root, ruleOf: RuleOf = ruleFromParsedOptions): GatewaySchema {
  const methods: QueryMethod[] = [];
  for (const service of servicesOf(root)) {
    for (const method of service.methodsArray) {
      if (method.requestStream || method.responseStream) continue;
      method.resolve();
      methods.push({
        grpcPath: `/${service.fullName.slice(1)}/${method.name}`,
        service,
        method,
        requestType: method.resolvedRequestType!,
        responseType: method.resolvedResponseType!,
        patterns: getPatterns(ruleOf(method)),
      });
    }
  }
  return { root, methods };
}

/** The ixo query services from proto/. */
export function bundledSchema(): GatewaySchema {
  return schemaFromRoot(loadProtoFiles(BUNDLED_FILES));
}

/**
 * The primary schema's methods, then the fallback's methods of services the primary does not have (the
 * names of those services are returned). Types stay in their own roots; both resolve `Any` values.
 */
export function withFallback(
  primary: GatewaySchema,
  fallback: GatewaySchema,
): { schema: GatewaySchema; fallbackServices: string[] } {
  const described = new Set(primary.methods.map((method) => method.service.fullName));
  const added = fallback.methods.filter((method) => !described.has(method.service.fullName));
  const fallbackServices = [...new Set(added.map((method) => method.service.fullName.slice(1)))];
  return {
    schema: {
      root: primary.root,
      roots: [...(primary.roots ?? []), fallback.root],
      methods: [...primary.methods, ...added],
    },
    fallbackServices,
  };
}

/** A schema from serialized FileDescriptorProtos (cosmos.reflection.v1 FileDescriptors). */
export function schemaFromFileDescriptors(files: readonly Uint8Array[]): GatewaySchema {
  const { FileDescriptorProto, HttpRule } = getDescriptorTypes();
  const rules = new Map<string, HttpRule>();
  const set = protobuf.Writer.create();
  const decoded: FileDescriptor[] = [];
  for (const bytes of files) {
    set.uint32(10).bytes(bytes); // FileDescriptorSet.file = 1, length-delimited
    const file = FileDescriptorProto.decode(bytes) as unknown as FileDescriptor;
    decoded.push(file);
    const prefix = file.package ? `.${file.package}` : '';
    for (const service of file.service ?? []) {
      for (const method of service.method ?? []) {
        const rule = method.options?.['.google.api.http'];
        if (rule)
          rules.set(
            `${prefix}.${service.name}.${method.name}`,
            HttpRule.toObject(rule as protobuf.Message) as HttpRule,
          );
      }
    }
  }
  const root = protobuf.Root.fromDescriptor(set.finish(), { keepCase: true });
  for (const file of decoded) applyDescriptorOptions(root, file.package ?? '', file.message_type);
  return schemaFromRoot(root, (method) => rules.get(method.fullName));
}

/**
 * One FileDescriptorProto per package of the root, with dependencies and `google.api.http` options,
 * serialized. (protobufjs keeps no file boundaries, so files are per package.)
 */
export function fileDescriptorsOf(root: protobuf.Root, ruleOf: RuleOf = ruleFromParsedOptions): Uint8Array[] {
  const { FileDescriptorSet, FileDescriptorProto, MethodOptions, FieldOptions } = getDescriptorTypes();
  const plain = descriptor.FileDescriptorSet.encode(root.toDescriptor('proto3')).finish();
  const files = (FileDescriptorSet.decode(plain) as unknown as { file: FileDescriptor[] }).file;
  const packages = files.map((file) => file.package ?? '').sort((a, b) => b.length - a.length);
  const fileOfPackage = new Map(files.map((file) => [file.package ?? '', file.name]));
  const fileOf = (typeName: string) => {
    const pkg = packages.find((p) => typeName.startsWith(`.${p}.`));
    return pkg === undefined ? undefined : fileOfPackage.get(pkg);
  };
  for (const file of files) {
    const deps = new Set<string>();
    let gogo = false;
    for (const message of file.message_type ?? [])
      gogo = describeFields(root, `.${file.package}.${message.name}`, message, FieldOptions) || gogo;
    if (gogo) deps.add(fileOfPackage.get('gogoproto')!);
    for (const extension of file.extension ?? []) {
      const field = root.lookup(`.${file.package}.${extension.name}`);
      if (field instanceof protobuf.Field && field.resolve().resolvedType)
        extension.type_name = field.resolvedType!.fullName;
    }
    for (const typeName of typeReferences(file)) {
      const dep = fileOf(typeName);
      if (dep && dep !== file.name) deps.add(dep);
    }
    for (const service of file.service ?? []) {
      for (const method of service.method ?? []) {
        const reflected = root.lookup(`.${file.package}.${service.name}`) as protobuf.Service | null;
        const rule = reflected && ruleOf(reflected.methods[method.name]);
        if (!rule) continue;
        method.options = MethodOptions.fromObject({
          ...(method.options ?? {}),
          '.google.api.http': normalizeRule(rule),
        }) as unknown as MethodOptionsShape;
        deps.add(fileOfPackage.get('google.api')!);
      }
    }
    file.dependency = [...deps];
  }
  return files.map((file) => FileDescriptorProto.encode(file as unknown as protobuf.Message).finish());
}

interface MethodOptionsShape {
  '.google.api.http'?: unknown;
}
interface MessageDescriptor {
  name: string;
  field?: { name: string; type_name?: string; options?: unknown }[];
  nested_type?: MessageDescriptor[];
}
interface FileDescriptor {
  name: string;
  package?: string;
  dependency?: string[];
  message_type?: MessageDescriptor[];
  extension?: { name: string; type_name?: string; extendee?: string }[];
  service?: {
    name: string;
    method?: { name: string; input_type?: string; output_type?: string; options?: MethodOptionsShape }[];
  }[];
}

function* typeReferences(file: FileDescriptor): Generator<string> {
  const walk = function* (message: MessageDescriptor): Generator<string> {
    for (const field of message.field ?? []) if (field.type_name) yield field.type_name;
    for (const nested of message.nested_type ?? []) yield* walk(nested);
  };
  for (const message of file.message_type ?? []) yield* walk(message);
  for (const extension of file.extension ?? []) {
    if (extension.type_name) yield extension.type_name;
    if (extension.extendee) yield extension.extendee;
  }
  for (const service of file.service ?? []) {
    for (const method of service.method ?? []) {
      if (method.input_type) yield method.input_type;
      if (method.output_type) yield method.output_type;
    }
  }
}

/**
 * protobufjs writes type names as they were written in the .proto (descriptors carry full names) and
 * leaves out custom field options: qualifies the names and adds the gogoproto options. True when a
 * field of the message (or a nested one) has gogoproto options.
 */
function describeFields(
  root: protobuf.Root,
  fullName: string,
  message: MessageDescriptor,
  FieldOptions: protobuf.Type,
): boolean {
  const type = root.lookup(fullName);
  if (!(type instanceof protobuf.Type)) return false;
  let gogo = false;
  // protobufjs also lists extension fields (named `.google.api.http`) among the extendee's own fields.
  if (message.field) message.field = message.field.filter((field) => !field.name.startsWith('.'));
  for (const field of message.field ?? []) {
    const reflected = type.fields[field.name];
    const resolved = reflected?.resolve().resolvedType;
    if (field.type_name && resolved) field.type_name = resolved.fullName;
    const options = reflected && toDescriptorOptions(reflected);
    if (options) {
      field.options = FieldOptions.fromObject({ ...((field.options as object | undefined) ?? {}), ...options });
      gogo = true;
    }
  }
  for (const nested of message.nested_type ?? [])
    gogo = describeFields(root, `${fullName}.${nested.name}`, nested, FieldOptions) || gogo;
  return gogo;
}
