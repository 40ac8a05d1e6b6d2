// Thread: main
// Descriptors from the node itself: cosmos.reflection.v1.ReflectionService/FileDescriptors returns every
// proto file of the app (with its google.api.http options), so any Cosmos chain's routes can be served.
import { schemaFromFileDescriptors, type GatewaySchema } from './descriptors.js';
import { protobuf } from './proto-root.js';
import type { Upstream, UpstreamError } from './upstream.js';

export const FILE_DESCRIPTORS_PATH = '/cosmos.reflection.v1.ReflectionService/FileDescriptors';

/**
 * FileDescriptorsResponse read with `files` as bytes: the same wire format as the embedded
 * FileDescriptorProto messages, and each file stays in its serialized form for decoding with the
 * http-option-aware descriptor types.
 */
const RawFileDescriptors = new protobuf.Type('RawFileDescriptors').add(
  new protobuf.Field('files', 1, 'bytes', 'repeated'),
);

/** A whole app's descriptors (every module's protos) pass GATEWAY_MAX_RESPONSE_BYTES; read once at start-up. */
const MAX_DESCRIPTORS_BYTES = 64 * 1024 * 1024;

export async function fetchFileDescriptors(upstream: Upstream): Promise<Uint8Array[]> {
  let answer: Awaited<ReturnType<Upstream['call']>>;
  try {
    answer = await upstream.call(FILE_DESCRIPTORS_PATH, new Uint8Array(0), undefined, MAX_DESCRIPTORS_BYTES);
  } catch (error) {
    const failure = error as UpstreamError;
    throw Object.assign(
      new Error(
        `GATEWAY_DESCRIPTORS=reflection: ${FILE_DESCRIPTORS_PATH} on ${upstream.target} failed: ${failure.details || failure.message}`,
      ),
      { code: failure.code },
    );
  }
  return (RawFileDescriptors.decode(answer.bytes) as unknown as { files: Uint8Array[] }).files;
}

export async function reflectedSchema(upstream: Upstream): Promise<GatewaySchema> {
  return schemaFromFileDescriptors(await fetchFileDescriptors(upstream));
}
