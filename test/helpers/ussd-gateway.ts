// A telecom gateway as our tests need it: one POST per input, `text` = the inputs so far joined by `*`.
export interface UssdAnswer {
  status: number;
  contentType: string | null;
  body: string;
}

/** `timeoutMs`: give up (reject) after this long, as a gateway does. */
export async function postUssd(
  url: string,
  fields: Record<string, unknown>,
  form = false,
  timeoutMs?: number,
): Promise<UssdAnswer> {
  const res = await fetch(`${url}/api/ussd`, {
    method: 'POST',
    ...(timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
    body: form ? new URLSearchParams(fields as Record<string, string>).toString() : JSON.stringify(fields),
  });
  return { status: res.status, contentType: res.headers.get('content-type'), body: await res.text() };
}

export class GatewaySession {
  readonly inputs: string[] = [];
  readonly screens: string[] = [];

  constructor(
    readonly url: string,
    readonly sessionId: string,
    readonly phoneNumber = '+254700000001',
    readonly serviceCode = '*384*123#',
    readonly form = false,
  ) {}

  get text(): string {
    return this.inputs.join('*');
  }

  /** Dials (no input) or sends one more input; returns the screen. */
  async send(input?: string): Promise<string> {
    if (input !== undefined) this.inputs.push(input);
    const answer = await this.resend();
    this.screens.push(answer);
    return answer;
  }

  /** Sends the same `text` again, as a gateway retry does (to `url`: another server of a cluster). */
  async resend(url = this.url): Promise<string> {
    const { status, body } = await postUssd(
      url,
      { sessionId: this.sessionId, serviceCode: this.serviceCode, phoneNumber: this.phoneNumber, text: this.text },
      this.form,
    );
    if (status !== 200) throw new Error(`USSD answered HTTP ${status}: ${body}`);
    return body;
  }
}

/** Logs in with the built-in service's menu (Account Menu, Log in) on a new session; the screen after the PIN. */
export async function logIn(url: string, customerId: string, pin: string): Promise<string> {
  const session = new GatewaySession(url, `login-${Math.random().toString(16).slice(2, 10)}`);
  await session.send();
  await session.send('2');
  await session.send('1');
  await session.send(customerId);
  return session.send(pin);
}
