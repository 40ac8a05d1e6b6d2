// Thread: any (pure)
// What travels on the node link, and where a node's link is (carried in its lease heartbeat).

/** Where a node's link listens, and the token a connection must present first. */
export interface LinkAddress {
  host: string;
  port: number;
  token: string;
}

/** The first frame a caller sends. */
export interface HelloFrame {
  token: string;
}

/** The server's answer to a good hello; calls may follow. */
export interface WelcomeFrame {
  welcome: true;
}

/** A call (caller -> owner) and its answer (owner -> caller), matched by id. */
export interface CallFrame {
  id: number;
  request: unknown;
}
export interface AnswerFrame {
  id: number;
  answer: unknown;
}

export function isLinkAddress(value: unknown): value is LinkAddress {
  const link = value as Partial<LinkAddress> | undefined;
  return (
    typeof link === 'object' &&
    link !== null &&
    typeof link.host === 'string' &&
    typeof link.port === 'number' &&
    typeof link.token === 'string'
  );
}
