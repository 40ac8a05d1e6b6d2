// Thread: main
// Loading .proto files with protobufjs: the project's own files under proto/ and the google/api and
// google/protobuf files protobufjs ships. Field names are kept as declared (keepCase), because Cosmos REST
// JSON uses the declared names.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
// The descriptor extension adds Root.fromDescriptor / toDescriptor and exports descriptor.proto's types.
import descriptor from 'protobufjs/ext/descriptor.js';

/** proto/ at the repository root (this file runs from dist/src/gateway/). */
export const PROTO_DIR = fileURLToPath(new URL('../../../proto/', import.meta.url));

/** The query services the gateway serves out of the box, in route-priority order. */
export const BUNDLED_FILES = [
  'ixo/entity/v1beta1/query.proto',
  'ixo/claims/v1beta1/query.proto',
  'ixo/token/v1beta1/query.proto',
  'ixo/iid/v1beta1/query.proto',
  'ixo/bonds/v1beta1/query.proto',
  'ixo/epochs/v1beta1/query.proto',
  'ixo/liquidstake/v1beta1/query.proto',
  'ixo/mint/v1beta1/query.proto',
  'ixo/names/v1beta1/query.proto',
  'ixo/smartaccount/v1beta1/query.proto',
  'cosmos/bank/v1beta1/query.proto',
  'cosmos/auth/v1beta1/query.proto',
  'cosmos/staking/v1beta1/query.proto',
  'cosmos/distribution/v1beta1/query.proto',
  'cosmos/gov/v1/query.proto',
  'cosmos/authz/v1beta1/query.proto',
  'cosmos/feegrant/v1beta1/query.proto',
  'cosmos/tx/v1beta1/service.proto',
  'cosmos/base/tendermint/v1beta1/query.proto',
];

export const REFLECTION_FILE = 'cosmos/reflection/v1/reflection.proto';

const PROTOBUFJS_DIR = dirname(
  dirname(dirname(createRequire(import.meta.url).resolve('protobufjs/google/api/http.proto'))),
);

/** A protobufjs root that finds imports in `includeDirs`, and google/* in protobufjs's bundled files. */
export function createRoot(includeDirs: readonly string[] = [PROTO_DIR]): protobuf.Root {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => {
    if (isAbsolute(target)) return target;
    if (target.startsWith('google/')) return join(PROTOBUFJS_DIR, target);
    for (const dir of includeDirs) {
      const candidate = join(dir, target);
      if (existsSync(candidate)) return candidate;
    }
    return join(includeDirs[0] ?? '.', target);
  };
  return root;
}

/** Loads .proto files (names relative to the include dirs) into one resolved root. */
export function loadProtoFiles(files: readonly string[], includeDirs?: readonly string[]): protobuf.Root {
  const root = createRoot(includeDirs);
  root.loadSync([...files], { keepCase: true });
  root.resolveAll();
  return root;
}

export interface DescriptorTypes {
  readonly FileDescriptorSet: protobuf.Type;
  readonly FileDescriptorProto: protobuf.Type;
  readonly MethodOptions: protobuf.Type;
  readonly FieldOptions: protobuf.Type;
  readonly HttpRule: protobuf.Type;
}

let descriptorTypes: DescriptorTypes | undefined;

/**
 * descriptor.proto with the `google.api.http` extension declared on MethodOptions and the gogoproto ones
 * on FieldOptions. protobufjs's own descriptor types drop extensions, so descriptors from a node are
 * decoded with these to keep the HTTP annotations and the options that change the JSON.
 */
export function getDescriptorTypes(): DescriptorTypes {
  if (!descriptorTypes) {
    const root = loadProtoFiles(['google/api/annotations.proto', 'gogoproto/gogo.proto']);
    descriptorTypes = {
      FileDescriptorSet: root.lookupType('google.protobuf.FileDescriptorSet'),
      FileDescriptorProto: root.lookupType('google.protobuf.FileDescriptorProto'),
      MethodOptions: root.lookupType('google.protobuf.MethodOptions'),
      FieldOptions: root.lookupType('google.protobuf.FieldOptions'),
      HttpRule: root.lookupType('google.api.HttpRule'),
    };
  }
  return descriptorTypes;
}

export { protobuf, descriptor };
