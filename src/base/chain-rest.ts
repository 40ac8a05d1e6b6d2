// Thread: any
// A Cosmos REST GET answered in process by the protocol gateway face (its route table, request
// mapping, upstream gRPC and Cosmos JSON, as for an HTTP client), with no HTTP hop. The composition root
// (server.ts) serves it to the actor hosts over their main port (HostInit.mainPort): the USSD `query` action
// reads the chain through it, on the one connection to the chain node the main thread holds.

/** The gateway's answer: its HTTP status and its JSON body (the Cosmos REST error body when not 200). */
export interface RestAnswer {
  status: number;
  body: string;
  /** Set when no route of the gateway matches the path (the 404 is the definition's mistake, not the chain's). */
  unrouted?: true;
}

/** `path` with its query string (`/cosmos/bank/v1beta1/balances/ixo1.../by_denom?denom=uixo`), its deadline. */
export type RestQuery = (path: string, timeoutMs: number) => Promise<RestAnswer>;

/** What the main thread answers an actor host's calls with (rpc.ts, the other way round). */
export interface MainThreadCalls {
  chainRest(path: string, timeoutMs: number): Promise<RestAnswer>;
}
