// The aggregators other than Africa's Talking as our tests need them: each provider's request for a dial and for
// one input (only the latest: these gateways keep no history), and its answer read back as a `CON`/`END` screen.
export interface Provider {
  name: string;
  path: string;
  dial(session: ProviderSession): Record<string, unknown>;
  input(session: ProviderSession, text: string): Record<string, unknown>;
  /** The answer as the AT route would say it: `CON ...` or `END ...`. */
  screen(answer: any): string;
}

export interface ProviderSession {
  sessionId: string;
  /** As these gateways send it: digits, no `+`. */
  msisdn: string;
  /** The dialled string. */
  code: string;
  /** Requests sent so far (Hubtel's Sequence is the next one's number). */
  sent: number;
}

export const hubtel: Provider = {
  name: 'hubtel',
  path: '/api/ussd/hubtel',
  dial: (s) => ({
    Mobile: s.msisdn,
    SessionId: s.sessionId,
    ServiceCode: s.code.replace(/^\*|#$/g, ''),
    Type: 'Initiation',
    Message: s.code,
    Operator: 'mtn',
    Sequence: s.sent + 1,
    ClientState: '',
  }),
  input: (s, text) => ({
    Mobile: s.msisdn,
    SessionId: s.sessionId,
    ServiceCode: s.code.replace(/^\*|#$/g, ''),
    Type: 'Response',
    Message: text,
    Operator: 'mtn',
    Sequence: s.sent + 1,
    ClientState: '',
  }),
  screen: (a) => `${a.Type === 'Response' ? 'CON' : 'END'} ${a.Message}`,
};

export const arkesel: Provider = {
  name: 'arkesel',
  path: '/api/ussd/arkesel',
  dial: (s) => ({
    sessionID: s.sessionId,
    userID: 'arkesel-user',
    newSession: true,
    msisdn: s.msisdn,
    userData: s.code,
    network: 'MTN',
  }),
  input: (s, text) => ({
    sessionID: s.sessionId,
    userID: 'arkesel-user',
    newSession: false,
    msisdn: s.msisdn,
    userData: text,
    network: 'MTN',
  }),
  screen: (a) => `${a.continueSession ? 'CON' : 'END'} ${a.message}`,
};

export const nalo: Provider = {
  name: 'nalo',
  path: '/api/ussd/nalo',
  dial: (s) => ({
    USERID: 'NALOTest',
    MSISDN: s.msisdn,
    USERDATA: s.code,
    MSGTYPE: true,
    NETWORK: 'MTN',
    SESSIONID: s.sessionId,
  }),
  input: (s, text) => ({
    USERID: 'NALOTest',
    MSISDN: s.msisdn,
    USERDATA: text,
    MSGTYPE: false,
    NETWORK: 'MTN',
    SESSIONID: s.sessionId,
  }),
  screen: (a) => `${a.MSGTYPE ? 'CON' : 'END'} ${a.MSG}`,
};

export const beem: Provider = {
  name: 'beem',
  path: '/api/ussd/beem',
  dial: (s) => ({
    command: 'initiate',
    msisdn: s.msisdn,
    session_id: s.sessionId,
    operator: 'vodacom',
    payload: { request_id: 0, response: '0' },
  }),
  input: (s, text) => ({
    command: 'continue',
    msisdn: s.msisdn,
    session_id: s.sessionId,
    operator: 'vodacom',
    payload: { request_id: s.sent, response: text },
  }),
  screen: (a) => `${a.command === 'continue' ? 'CON' : 'END'} ${a.payload.request}`,
};

export const PROVIDERS = [hubtel, arkesel, nalo, beem];

export async function postJson(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text };
}

/** One session through a provider's route: `send()` dials, `send(text)` sends one input; both answer the screen. */
export class ProviderClient {
  readonly session: ProviderSession;
  last: any;

  constructor(
    readonly url: string,
    readonly provider: Provider,
    sessionId: string,
    msisdn = '233246912184',
    code = '*384#',
  ) {
    this.session = { sessionId, msisdn, code, sent: 0 };
  }

  async send(text?: string): Promise<string> {
    const body = text === undefined ? this.provider.dial(this.session) : this.provider.input(this.session, text);
    return this.post(body, true);
  }

  /** Posts `body` as is (counted as a request when `counts`). */
  async post(body: unknown, counts = false): Promise<string> {
    const { status, json } = await postJson(`${this.url}${this.provider.path}`, body);
    if (status !== 200) throw new Error(`${this.provider.name} answered HTTP ${status}: ${JSON.stringify(json)}`);
    if (counts) this.session.sent++;
    this.last = json;
    return this.provider.screen(json);
  }
}
