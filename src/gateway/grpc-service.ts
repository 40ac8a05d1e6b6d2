// Thread: main
// A @grpc/grpc-js service definition for a protobufjs service: requests decoded to messages, responses
// encoded from plain objects. Used by the embedded node (and by tests that stand up their own nodes).
import type { ServiceDefinition, MethodDefinition } from '@grpc/grpc-js';
import type { protobuf } from './proto-root.js';

export function serviceDefinitionOf(service: protobuf.Service): ServiceDefinition {
  const definition: Record<string, MethodDefinition<unknown, unknown>> = {};
  for (const method of service.methodsArray) {
    method.resolve();
    const requestType = method.resolvedRequestType!;
    const responseType = method.resolvedResponseType!;
    definition[method.name] = {
      path: `/${service.fullName.slice(1)}/${method.name}`,
      requestStream: !!method.requestStream,
      responseStream: !!method.responseStream,
      requestSerialize: (value) => Buffer.from(requestType.encode(requestType.fromObject(value as object)).finish()),
      requestDeserialize: (bytes) => requestType.decode(bytes),
      responseSerialize: (value) => Buffer.from(responseType.encode(responseType.fromObject(value as object)).finish()),
      responseDeserialize: (bytes) => responseType.decode(bytes),
    };
  }
  return definition;
}
