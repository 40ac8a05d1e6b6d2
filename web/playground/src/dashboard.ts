// The live dashboard: polls GET /metrics (Prometheus text) every two seconds while it is on screen, computes
// request rate and latency percentiles from consecutive scrapes and plots the last two minutes with uPlot.
// Polls count against the rate limit like any request (RATE_LIMIT_MAX per window), hence not faster, and not
// while nobody looks.
import uPlot from 'uplot';
import { byId, el, errorMessage } from './dom.js';
import { figuresBetween, parsePrometheusText, reduceScrape, type Scrape } from './metrics.js';

const POLL_MS = 2000;
const WINDOW = 60;
const HEIGHT = 180;

interface Chart {
  plot: uPlot;
  series: (number | null)[][];
}

function chart(container: HTMLElement, title: string, labels: string[], unit: string): Chart {
  const figure = el('figure', '', { class: 'chart' });
  container.append(figure);
  const series: (number | null)[][] = [[], ...labels.map(() => [])];
  const colours = ['#0b6bcb', '#c2410c', '#15803d', '#7c3aed'];
  const plot = new uPlot(
    {
      title,
      width: Math.max(260, figure.clientWidth || 320),
      height: HEIGHT,
      series: [
        {},
        ...labels.map((label, i) => ({ label, stroke: colours[i % colours.length], width: 2, spanGaps: false })),
      ],
      axes: [{}, { label: unit, size: 60 }],
      scales: {
        // Always the last WINDOW seconds (a lone first point would otherwise span years), from zero upwards.
        x: {
          time: true,
          range: (u) => {
            const last = u.data[0].at(-1) ?? Date.now() / 1000;
            return [last - WINDOW * (POLL_MS / 1000), last];
          },
        },
        y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] },
      },
    },
    series as uPlot.AlignedData,
    figure,
  );
  // The grid decides each figure's width (it changes as charts are added and with the window): follow it.
  new ResizeObserver(() => plot.setSize({ width: Math.max(260, figure.clientWidth), height: HEIGHT })).observe(figure);
  return { plot, series };
}

function push(target: Chart, at: number, values: (number | null)[]): void {
  target.series[0].push(at / 1000);
  for (const [i, value] of values.entries()) target.series[i + 1].push(value);
  if (target.series[0].length > WINDOW) for (const line of target.series) line.shift();
  target.plot.setData(target.series as uPlot.AlignedData);
}

const ms = (seconds: number | null) => (seconds === null ? null : seconds * 1000);
const format = (value: number | null, digits = 1) => (value === null ? '–' : value.toFixed(digits));

/** A clear sentence for each way /metrics can refuse. */
function refusal(status: number): string {
  if (status === 404)
    return 'This server has no GET /metrics route (metrics are not part of this build), so there is nothing to plot.';
  if (status === 429)
    return 'Rate limited (RATE_LIMIT_MAX requests per window from this address): the dashboard tries again shortly.';
  if (status === 401) return 'GET /metrics needs the operator token: enter OPERATOR_TOKEN above.';
  if (status === 403)
    return 'GET /metrics answers only loopback callers and holders of OPERATOR_TOKEN: enter the token above.';
  return `GET /metrics answered HTTP ${status}.`;
}

export function setupDashboard(): void {
  const token = byId<HTMLInputElement>('dashboard-token');
  const toggle = byId<HTMLButtonElement>('dashboard-toggle');
  const status = byId('dashboard-status');
  const charts = byId('dashboard-charts');
  const figures = {
    rps: byId('dashboard-rps'),
    latency: byId('dashboard-latency'),
    ussd: byId('dashboard-ussd'),
    streams: byId('dashboard-streams'),
    actors: byId('dashboard-actors'),
    mailbox: byId('dashboard-mailbox'),
  };
  const rate = chart(charts, 'Requests per second', ['requests/s'], 'req/s');
  const latency = chart(charts, 'Latency', ['p50', 'p95', 'p99'], 'ms');
  const activity = chart(charts, 'Active', ['USSD sessions', 'SSE streams', 'WebSockets', 'actors'], 'count');
  const mailbox = chart(charts, 'Actor mailbox depth', ['queued messages'], 'messages');
  let previous: Scrape | undefined;
  let timer: number | undefined;

  let onScreen = false;
  new IntersectionObserver(([entry]) => {
    onScreen = entry.isIntersecting;
  }).observe(byId('dashboard'));

  const poll = async () => {
    if (!onScreen || document.hidden) {
      // A rate over the gap would smear it: start over when the dashboard is back in view.
      previous = undefined;
      status.textContent = 'Paused while the dashboard is out of view.';
      status.dataset.state = 'paused';
      return;
    }
    try {
      const headers: Record<string, string> = token.value ? { authorization: `Bearer ${token.value}` } : {};
      const response = await fetch('/metrics', { headers, cache: 'no-store' });
      if (!response.ok) {
        status.textContent = refusal(response.status);
        status.dataset.state = 'refused';
        previous = undefined;
        return;
      }
      const scrape = reduceScrape(parsePrometheusText(await response.text()), Date.now());
      if (previous) {
        const now = figuresBetween(previous, scrape);
        figures.rps.textContent = format(now.requestsPerSecond);
        figures.latency.textContent = `${format(ms(now.p50))} / ${format(ms(now.p95))} / ${format(ms(now.p99))} ms`;
        push(rate, scrape.at, [now.requestsPerSecond]);
        push(latency, scrape.at, [ms(now.p50), ms(now.p95), ms(now.p99)]);
      }
      figures.ussd.textContent = String(scrape.ussdSessions);
      figures.streams.textContent = `${scrape.sseStreams} / ${scrape.sockets}`;
      figures.actors.textContent = String(scrape.actors);
      figures.mailbox.textContent = String(scrape.mailboxDepth);
      push(activity, scrape.at, [scrape.ussdSessions, scrape.sseStreams, scrape.sockets, scrape.actors]);
      push(mailbox, scrape.at, [scrape.mailboxDepth]);
      status.textContent = `Updated ${new Date(scrape.at).toLocaleTimeString()} (every ${POLL_MS / 1000} s; the dashboard's own requests are not counted).`;
      status.dataset.state = 'live';
      previous = scrape;
    } catch (error) {
      status.textContent = `Cannot read /metrics: ${errorMessage(error)}`;
      status.dataset.state = 'error';
    }
  };

  // One poll at a time: the next is scheduled when the previous one finished.
  const loop = async () => {
    await poll();
    if (timer !== undefined) timer = window.setTimeout(loop, POLL_MS);
  };
  const start = () => {
    timer = window.setTimeout(loop, 0);
    toggle.textContent = 'Pause';
  };
  const stop = () => {
    window.clearTimeout(timer);
    timer = undefined;
    toggle.textContent = 'Resume';
  };
  toggle.addEventListener('click', () => (timer === undefined ? start() : stop()));
  // A new token starts the figures over (the previous scrape may have been refused); Enter must not reload.
  token.addEventListener('change', () => {
    previous = undefined;
  });
  byId<HTMLFormElement>('dashboard-form').addEventListener('submit', (event) => event.preventDefault());
  start();
}
