// A unary gRPC method of raw bytes, for grpc-js servers and clients in tests that check transport, not messages.
const same = (bytes: Buffer) => bytes;

export const rawMethod = (path: string) => ({
  path,
  requestStream: false,
  responseStream: false,
  requestSerialize: same,
  requestDeserialize: same,
  responseSerialize: same,
  responseDeserialize: same,
});
