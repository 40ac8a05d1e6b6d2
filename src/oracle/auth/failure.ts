// Thread: any
// Why an artifact was refused. The authenticator turns it into the 401 of the wire format
// (message `Invalid UCAN invocation`, the reason beside it); storage checks turn it into a 400.
export class AuthFailure extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'AuthFailure';
  }
}

export function fail(reason: string): never {
  throw new AuthFailure(reason);
}

/** The signature verifier itself failed (the CPU pool is down): a server fault, never the client's. */
export class VerifierUnavailable extends Error {
  constructor(cause: unknown) {
    super(`signature verifier failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'VerifierUnavailable';
  }
}
