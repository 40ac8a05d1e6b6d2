// Thread: main
// The command line of `npm run load`, validated into LoadOptions. Every bad value is an error naming the flag.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { SCENARIOS, type ScenarioName } from './scenarios/types.js';
import { parseSlo, type SloClause } from './slo.js';
import { parseDuration, parsePercent, parsePositiveInt, parseRate } from './units.js';

export interface UssdPath {
  name: string;
  weight: number;
  /** The user's inputs after the dial, e.g. ["1", "1", "0"]. */
  inputs: string[];
}

export interface LoadOptions {
  target: URL;
  scenario: ScenarioName | 'mix';
  /** Weights of the scenarios in a mix (only the chosen scenario, weight 1, otherwise). */
  mix: Partial<Record<ScenarioName, number>>;
  durationMs: number;
  /** Open loop: journeys started per second. Unset: closed loop. */
  rate?: number;
  connections: number;
  maxInFlight: number;
  timeoutMs: number;
  headers: Record<string, string>;
  findCapacity: boolean;
  slo: SloClause[];
  sloText: string;
  stepDurationMs: number;
  stepFactor: number;
  maxRate: number;
  refine: number;
  progress: boolean;
  json?: string;
  html?: string;
  compare?: string;
  maxRegression: number;
  metrics: boolean;
  metricsPath: string;
  metricsToken?: string;
  /** Other servers whose /metrics count in the cost per request (a cluster's other nodes). */
  metricsTargets: URL[];
  /** NATS servers' monitoring endpoints (http://host:8222) whose CPU and messages count in it. */
  natsMonitors: URL[];
  ussdRoute: string;
  ussdPaths: UssdPath[];
  thinkMs: [number, number];
  serviceCode: string;
  phonePrefix: string;
  oracleDid?: string;
  users: number;
  message: string;
  turns: number;
  wsHoldMs: number;
  wsPingMs: number;
  wsTurns: number;
  gatewayPaths: string[];
}

export const USAGE = `Usage: npm run load -- --target http://host:3000 --scenario ussd|chat|ws|gateway|mix [options]
(builds dist/ first when the sources are newer)

Load
  --duration 10s            length of the run (closed loop or open loop)
  --rate N/s                open loop: N journeys start every second, latency counted from each scheduled start
  --connections 10          closed loop (no --rate): concurrent users, each starting its next journey at once
  --max-in-flight 10000     open loop: journeys in flight beyond this are dropped and counted as errors
  --timeout 10s             a request without an answer by then is an error ("timeout")
  --header 'name: value'    extra header on every HTTP request (repeatable), e.g. x-api-key for the gateway
  --find-capacity           step the open-loop rate up until --slo breaks; report the highest rate that held
  --slo p99<300ms,errors<0.1%   the objective of --find-capacity
  --rate (start, 10/s) --step-duration 10s --step-factor 1.5 --max-rate 100000/s --refine 2 (bisections after the break)

Scenarios
  --mix ussd=50,chat=20,ws=10,gateway=20   weights of --scenario mix
  ussd:    --ussd-path 1,1,0,2,00 (inputs after the dial; repeatable) or --ussd-sessions paths.json
           ([{ "name", "weight", "inputs": [...] }]), --think 1s or 500ms-2s (between steps),
           --service-code '*384#', --phone-prefix +2547, --ussd-route /api/ussd
  chat:    --oracle-did did:key:... (the server logs it at start-up: "oracle identity ..."), --users 10,
           --message 'hello', --turns 1 (streamed messages per session, --think between them)
  ws:      --oracle-did, --ws-hold 10s (time each client stays connected), --ws-ping 1s, --ws-turns 1
           (chat messages sent while holding, whose events the socket counts)
  gateway: --paths /ixo/token/params,/ixo/entity/params (comma-separated, repeatable) or --paths-file list.txt

Reports
  --progress                a line per second (default: only when stdout is a terminal); --no-progress
  --json out.json           every figure;  --html report.html  self-contained charts
  --compare old.json        print the difference; exit 1 when a figure is worse by more than --max-regression 10%
  --metrics-token T         OPERATOR_TOKEN for GET /metrics (server CPU, RSS, mailbox depth); --no-metrics
  --metrics-target URL      another server whose CPU counts in the cost per request, e.g. a cluster's other
                            nodes (repeatable, comma-separated; same path and token as the target's /metrics)
  --nats-monitor URL        a NATS server's monitoring endpoint, e.g. http://nats-1:8222 (repeatable): its CPU
                            and messages count in the cost per request`;

const DEFAULT_USSD_PATH: UssdPath = { name: 'browse', weight: 1, inputs: ['1', '1', '0', '2', '00'] };
const DEFAULT_GATEWAY_PATHS = [
  '/ixo/token/params',
  '/ixo/entity/params',
  '/ixo/entity?pagination.limit=2',
  '/ixo/claims/collections',
];

function list(values: string[] | undefined): string[] {
  return (values ?? [])
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}

function parseMix(text: string): Partial<Record<ScenarioName, number>> {
  const mix: Partial<Record<ScenarioName, number>> = {};
  for (const part of list([text])) {
    const [name, weight] = part.split('=').map((s) => s.trim());
    if (!SCENARIOS.includes(name as ScenarioName))
      throw new Error(`--mix: unknown scenario "${name}" (one of ${SCENARIOS.join(', ')})`);
    const n = Number(weight);
    if (!(n >= 0)) throw new Error(`--mix: the weight of ${name} must be a number >= 0`);
    mix[name as ScenarioName] = n;
  }
  if (!Object.values(mix).some((n) => n! > 0))
    throw new Error('--mix needs at least one scenario with a weight above 0, e.g. ussd=50,gateway=50');
  return mix;
}

function parseThink(text: string): [number, number] {
  const [min, max = min] = text.split('-').map((part) => parseDuration(part, '--think'));
  if (max < min) throw new Error('--think: the range must go from low to high, e.g. 500ms-2s');
  return [min, max];
}

function readUssdSessions(file: string): UssdPath[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`--ussd-sessions ${file}: ${(error as Error).message}`);
  }
  const entries = Array.isArray(parsed) ? parsed : (parsed as { paths?: unknown })?.paths;
  if (!Array.isArray(entries) || entries.length === 0)
    throw new Error(`--ussd-sessions ${file}: expected a non-empty array of { name, weight, inputs }`);
  return entries.map((entry: { name?: unknown; weight?: unknown; inputs?: unknown }, i) => {
    if (!Array.isArray(entry?.inputs) || !entry.inputs.every((s) => typeof s === 'string')) {
      throw new Error(`--ussd-sessions ${file}: entry ${i} needs "inputs": an array of strings`);
    }
    const weight = entry.weight === undefined ? 1 : Number(entry.weight);
    if (!(weight >= 0)) throw new Error(`--ussd-sessions ${file}: entry ${i}: "weight" must be a number >= 0`);
    return { name: typeof entry.name === 'string' ? entry.name : `path ${i + 1}`, weight, inputs: entry.inputs };
  });
}

/** http(s) URLs from a repeatable, comma-separated flag. */
function urls(values: string[] | undefined, flag: string): URL[] {
  return list(values).map((text) => {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new Error(`${flag} must be a URL like http://host:port, got "${text}"`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`${flag} must be an http(s):// URL`);
    return url;
  });
}

function wholeNumber(text: string, what: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${what} must be a whole number >= 0, got "${text}"`);
  return n;
}

function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  if (colon <= 0) throw new Error(`--header must look like 'name: value', got "${text}"`);
  return [text.slice(0, colon).trim().toLowerCase(), text.slice(colon + 1).trim()];
}

export function parseOptions(argv: string[], isTty = Boolean(process.stdout.isTTY)): LoadOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    allowNegative: true,
    options: {
      target: { type: 'string' },
      scenario: { type: 'string', default: 'gateway' },
      mix: { type: 'string' },
      duration: { type: 'string', default: '10s' },
      rate: { type: 'string' },
      connections: { type: 'string', default: '10' },
      'max-in-flight': { type: 'string', default: '10000' },
      timeout: { type: 'string', default: '10s' },
      header: { type: 'string', multiple: true },
      'find-capacity': { type: 'boolean', default: false },
      slo: { type: 'string', default: 'p99<300ms,errors<0.1%' },
      'step-duration': { type: 'string', default: '10s' },
      'step-factor': { type: 'string', default: '1.5' },
      'max-rate': { type: 'string', default: '100000' },
      refine: { type: 'string', default: '2' },
      progress: { type: 'boolean', default: isTty },
      json: { type: 'string' },
      html: { type: 'string' },
      compare: { type: 'string' },
      'max-regression': { type: 'string', default: '10%' },
      metrics: { type: 'boolean', default: true },
      'metrics-path': { type: 'string', default: '/metrics' },
      'metrics-token': { type: 'string', default: process.env.OPERATOR_TOKEN },
      'metrics-target': { type: 'string', multiple: true },
      'nats-monitor': { type: 'string', multiple: true },
      'ussd-route': { type: 'string', default: '/api/ussd' },
      'ussd-path': { type: 'string', multiple: true },
      'ussd-sessions': { type: 'string' },
      think: { type: 'string', default: '1s' },
      'service-code': { type: 'string', default: '*384#' },
      'phone-prefix': { type: 'string', default: '+2547' },
      'oracle-did': { type: 'string', default: process.env.ORACLE_DID },
      users: { type: 'string', default: '10' },
      message: { type: 'string', default: 'Hello! What can you do for me today?' },
      turns: { type: 'string', default: '1' },
      'ws-hold': { type: 'string', default: '10s' },
      'ws-ping': { type: 'string', default: '1s' },
      'ws-turns': { type: 'string', default: '1' },
      paths: { type: 'string', multiple: true },
      'paths-file': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';

  if (!values.target) throw new Error('--target is required, e.g. --target http://127.0.0.1:3000');
  let target: URL;
  try {
    target = new URL(values.target);
  } catch {
    throw new Error(`--target must be a URL like http://host:3000, got "${values.target}"`);
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw new Error('--target must be an http:// or https:// URL');

  const scenario = values.scenario as LoadOptions['scenario'];
  if (scenario !== 'mix' && !SCENARIOS.includes(scenario))
    throw new Error(`--scenario must be one of ${[...SCENARIOS, 'mix'].join(', ')}`);
  if (values.mix && scenario !== 'mix') throw new Error('--mix goes with --scenario mix');
  const mix = scenario === 'mix' ? parseMix(values.mix ?? 'ussd=40,chat=20,ws=10,gateway=30') : { [scenario]: 1 };
  const uses = (name: ScenarioName) => (mix[name] ?? 0) > 0;

  const oracleDid = values['oracle-did'];
  if ((uses('chat') || uses('ws')) && !oracleDid?.startsWith('did:')) {
    throw new Error(
      '--oracle-did is required for chat and ws (the server logs it at start-up: "oracle identity did:...")',
    );
  }
  const ussdPaths = values['ussd-sessions']
    ? readUssdSessions(values['ussd-sessions'])
    : values['ussd-path']
      ? values['ussd-path'].map((p, i) => ({
          name: `path ${i + 1}`,
          weight: 1,
          inputs: p.split(',').map((s) => s.trim()),
        }))
      : [DEFAULT_USSD_PATH];
  const gatewayPaths = values['paths-file']
    ? readFileSync(values['paths-file'], 'utf8')
        .split('\n')
        .map((s) => s.trim())
        .filter((s) => s && !s.startsWith('#'))
    : list(values.paths);
  for (const path of gatewayPaths) if (!path.startsWith('/')) throw new Error(`--paths: "${path}" must start with /`);
  const stepFactor = Number(values['step-factor']);
  if (!(stepFactor > 1)) throw new Error('--step-factor must be a number above 1');
  const refine = wholeNumber(values.refine, '--refine');
  if (!/^\+\d{1,10}$/.test(values['phone-prefix']))
    throw new Error('--phone-prefix must be + and up to 10 digits, e.g. +2547');

  const metricsTargets = urls(values['metrics-target'], '--metrics-target');
  const natsMonitors = urls(values['nats-monitor'], '--nats-monitor');
  if (!values.metrics && (metricsTargets.length || natsMonitors.length))
    throw new Error('--metrics-target and --nats-monitor read metrics: leave out --no-metrics');

  const durationMs = parseDuration(values.duration, '--duration');
  if (!(durationMs > 0)) throw new Error('--duration must be more than 0');

  return {
    target,
    scenario,
    mix,
    durationMs,
    rate: values.rate === undefined ? (values['find-capacity'] ? 10 : undefined) : parseRate(values.rate, '--rate'),
    connections: parsePositiveInt(values.connections, '--connections'),
    maxInFlight: parsePositiveInt(values['max-in-flight'], '--max-in-flight'),
    timeoutMs: parseDuration(values.timeout, '--timeout'),
    headers: Object.fromEntries((values.header ?? []).map(parseHeader)),
    findCapacity: values['find-capacity'],
    slo: parseSlo(values.slo),
    sloText: values.slo,
    stepDurationMs: parseDuration(values['step-duration'], '--step-duration'),
    stepFactor,
    maxRate: parseRate(values['max-rate'], '--max-rate'),
    refine,
    progress: values.progress,
    json: values.json,
    html: values.html,
    compare: values.compare,
    maxRegression: parsePercent(values['max-regression'], '--max-regression'),
    metrics: values.metrics,
    metricsPath: values['metrics-path'],
    metricsToken: values['metrics-token'],
    metricsTargets,
    natsMonitors,
    ussdRoute: values['ussd-route'],
    ussdPaths,
    thinkMs: parseThink(values.think),
    serviceCode: values['service-code'],
    phonePrefix: values['phone-prefix'],
    oracleDid,
    users: parsePositiveInt(values.users, '--users'),
    message: values.message,
    turns: parsePositiveInt(values.turns, '--turns'),
    wsHoldMs: parseDuration(values['ws-hold'], '--ws-hold'),
    wsPingMs: parseDuration(values['ws-ping'], '--ws-ping'),
    wsTurns: wholeNumber(values['ws-turns'], '--ws-turns'),
    gatewayPaths: gatewayPaths.length ? gatewayPaths : DEFAULT_GATEWAY_PATHS,
  };
}
