// Thread: main
// Interactive USSD simulator (`npm run ussd`): dials a running server the way a telecom gateway does, one POST
// per input with the whole history joined by `*` in `text`, and shows each screen until an END. It lists the
// services the server serves (GET /api/ussd/services) and, after an END, dials the same code or any other.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';

const USAGE = `Usage: npm run ussd -- [--url URL] [--phone +E164] [--code *123#] [--list]

  --url    USSD endpoint (env USSD_URL, default http://127.0.0.1:3000/api/ussd)
  --phone  caller's number in E.164 (env USSD_PHONE, default +254712345678)
  --code   dialled service code (env USSD_SERVICE_CODE, default *384#)
  --list   print the services the server serves (GET <url>/services) and exit

Type your answer and press Enter; an empty line sends an empty input. Ctrl+D hangs up. After an END, y dials
the same code again, a service code (like *500#) dials that one, anything else quits.`;

interface Options {
  url: string;
  phoneNumber: string;
  serviceCode: string;
  list: boolean;
}

/** A service as GET /api/ussd/services lists it. */
interface ServiceSummary {
  id: string;
  version: string;
  name: string;
  codes: { code: string; start?: string }[];
}

const SERVICE_CODE = /^\*\d+(\*\d+)*#$/;

type Answer = { kind: 'screen'; end: boolean; text: string } | { kind: 'problem'; message: string; fatal: boolean };

const parseCommandLine = () =>
  parseArgs({
    options: {
      url: { type: 'string' },
      phone: { type: 'string' },
      code: { type: 'string' },
      list: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });

/** The options, 'help' for --help, or the message of a bad command line. */
function readOptions(): Options | 'help' | { error: string } {
  let values: ReturnType<typeof parseCommandLine>['values'];
  try {
    ({ values } = parseCommandLine());
  } catch (error) {
    return { error: (error as Error).message };
  }
  if (values.help) return 'help';
  return {
    url: values.url ?? process.env.USSD_URL ?? 'http://127.0.0.1:3000/api/ussd',
    phoneNumber: values.phone ?? process.env.USSD_PHONE ?? '+254712345678',
    serviceCode: values.code ?? process.env.USSD_SERVICE_CODE ?? '*384#',
    list: values.list === true,
  };
}

/** The services the server lists, or the message of why they cannot be read. */
async function listServices(options: Options): Promise<ServiceSummary[] | { error: string }> {
  const url = `${options.url.replace(/\/+$/, '')}/services`;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(15_000) });
    const body = (await response.json().catch(() => undefined)) as { services?: ServiceSummary[] } | undefined;
    if (response.status !== 200 || !Array.isArray(body?.services))
      return { error: `No service list at ${url} (HTTP ${response.status}).` };
    return body.services;
  } catch (error) {
    return { error: describeFailure(url, error) };
  }
}

/** One line per service: its codes (with the state an extended code starts at), name, id and version. */
function describeServices(services: readonly ServiceSummary[]): string {
  if (services.length === 0) return 'The server serves no USSD service.\n';
  const lines = services.map((service) => {
    const codes = service.codes.map((entry) => (entry.start ? `${entry.code} (${entry.start})` : entry.code));
    return `  ${codes.join(', ')}  ${service.name} (${service.id} ${service.version})`;
  });
  return `Services:\n${lines.join('\n')}\n`;
}

/** One gateway request. Never throws: transport failures come back as a problem to show. */
async function send(options: Options, sessionId: string, text: string): Promise<Answer> {
  let response: Response;
  try {
    response = await fetch(options.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sessionId, serviceCode: options.serviceCode, phoneNumber: options.phoneNumber, text }),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    return { kind: 'problem', message: describeFailure(options.url, error), fatal: true };
  }
  const body = await response.text();
  if (response.status === 429) {
    const wait = response.headers.get('retry-after');
    return { kind: 'problem', message: `Rate limited (HTTP 429)${wait ? `: retry in ${wait} s` : ''}.`, fatal: false };
  }
  const match = /^(CON|END) ([\s\S]*)$/.exec(body);
  if (response.status !== 200 || !match) {
    // A real gateway ends the user's session on such an answer.
    return {
      kind: 'problem',
      message: `Unexpected answer (HTTP ${response.status}): ${body.slice(0, 300)}`,
      fatal: false,
    };
  }
  return { kind: 'screen', end: match[1] === 'END', text: match[2] };
}

function describeFailure(url: string, error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = cause?.code ?? (error as { name?: string }).name;
  if (code === 'ECONNREFUSED') {
    return `Cannot reach the USSD server at ${url}: connection refused. Is it running? Start it with "npm start" or set USSD_URL.`;
  }
  if (code === 'TimeoutError') return `The USSD server at ${url} did not answer within 15 s.`;
  if (code === 'ENOTFOUND') return `Cannot resolve the host of ${url}.`;
  return `Request to ${url} failed: ${cause?.message ?? (error as Error).message}`;
}

function show(answer: Extract<Answer, { kind: 'screen' }>): void {
  const rule = '-'.repeat(32);
  process.stdout.write(`${rule} ${answer.end ? 'END' : 'CON'}\n${answer.text}\n${rule}\n`);
}

async function main(): Promise<number> {
  const options = readOptions();
  if (options === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if ('error' in options) {
    process.stderr.write(`${options.error}\n\n${USAGE}\n`);
    return 2;
  }
  if (options.list) {
    const services = await listServices(options);
    if ('error' in services) {
      process.stderr.write(`${services.error}\n`);
      return 1;
    }
    process.stdout.write(describeServices(services));
    return 0;
  }
  // Best effort: a server without the list (or not running) is dialled all the same, and says so then.
  const services = await listServices(options);
  if (!('error' in services)) process.stdout.write(describeServices(services));
  const terminal = createInterface({ input: process.stdin, terminal: false });
  // The iterator buffers lines, so piped input (printf '1\n*\n' | npm run ussd) is not lost between prompts.
  const lines = terminal[Symbol.asyncIterator]();
  const ask = async (prompt: string): Promise<string | undefined> => {
    process.stdout.write(prompt);
    const next = await lines.next();
    // Piped input is not echoed by a terminal: echo it so the transcript reads like a session.
    if (!next.done && !process.stdin.isTTY) process.stdout.write(`${next.value}\n`);
    return next.done ? undefined : next.value;
  };
  try {
    process.stdout.write(`Dialling ${options.serviceCode} from ${options.phoneNumber} (${options.url})\n`);
    for (;;) {
      const sessionId = `sim-${randomUUID()}`;
      const inputs: string[] = [];
      for (;;) {
        const answer = await send(options, sessionId, inputs.join('*'));
        if (answer.kind === 'problem') {
          process.stderr.write(`${answer.message}\n`);
          if (answer.fatal) return 1;
          break;
        }
        show(answer);
        if (answer.end) break;
        const input = await ask('> ');
        if (input === undefined) return 0;
        inputs.push(input);
      }
      const again = (await ask('Session ended. Dial again? [y: the same code, or a code like *500#; N] '))?.trim();
      if (again && SERVICE_CODE.test(again)) options.serviceCode = again;
      else if (!again || !/^y(es)?$/i.test(again)) return 0;
      process.stdout.write(`Dialling ${options.serviceCode} from ${options.phoneNumber}\n`);
    }
  } finally {
    terminal.close();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`ussd simulator failed: ${(error as Error).message}\n`);
    process.exitCode = 1;
  },
);
