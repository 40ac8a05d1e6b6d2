// The --html report opened in headless Chromium from a file (no network): every chart is drawn with data,
// checked by counting the pixels of each series' colour on its canvas; a screenshot is kept as an artifact.
// The target serves /metrics with prom-client (process metrics and actor_mailbox_depth by host), as the server does.
import t from 'tap';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { artifactPath, launchBrowser } from './helpers/browser.js';
import { readJson, runLoadCli, startStub, tempDir } from './load-helpers.js';

/** Per chart: how many of its canvas's pixels have each series' colour (antialiased edges included). */
const COUNT_SERIES_PIXELS = () =>
  (window as any).charts.map(
    (chart: { id: string; points: number; colors: string[]; plot: { ctx: CanvasRenderingContext2D } }) => {
      const { ctx } = chart.plot;
      const { data } = ctx.getImageData(0, 0, ctx.canvas.width, ctx.canvas.height);
      const pixels = chart.colors.map((hex) => {
        const [r, g, b] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
        let n = 0;
        for (let i = 0; i < data.length; i += 4)
          if (Math.abs(data[i] - r) + Math.abs(data[i + 1] - g) + Math.abs(data[i + 2] - b) < 60 && data[i + 3] > 200)
            n++;
        return n;
      });
      return { id: chart.id, points: chart.points, pixels };
    },
  );

t.test('capacity search report with server metrics: every chart drawn', async (t) => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const mailbox = new Gauge({
    name: 'actor_mailbox_depth',
    help: 'messages waiting',
    labelNames: ['host'],
    registers: [registry],
  });
  let served = 0;
  const url = await startStub(t, async (req, res) => {
    if (req.url === '/metrics') {
      mailbox.set({ host: '0' }, served % 7);
      mailbox.set({ host: '1' }, served % 3);
      res.setHeader('content-type', registry.contentType);
      return res.end(await registry.metrics());
    }
    served++;
    res.end('ok');
  });
  const dir = tempDir(t);
  const run = await runLoadCli([
    '--target',
    url,
    '--scenario',
    'gateway',
    '--paths',
    '/a,/b',
    '--find-capacity',
    '--slo',
    'p99<500ms',
    '--rate',
    '20/s',
    '--step-factor',
    '2',
    '--max-rate',
    '40/s',
    '--step-duration',
    '1.5s',
    '--json',
    join(dir, 'r.json'),
    '--html',
    join(dir, 'r.html'),
  ]);
  t.equal(run.code, 0, run.stderr);
  const report = readJson(join(dir, 'r.json'));
  t.equal(report.server.available, true, 'metrics scraped');
  t.ok(report.server.series.length >= 3, `${report.server.series.length} scrapes`);
  t.ok(report.server.series.some((p: { mailboxDepth: number | null }) => p.mailboxDepth !== null));

  const browser = await launchBrowser(t);
  const page = await browser.newPage({ viewport: { width: 960, height: 900 } });
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(pathToFileURL(join(dir, 'r.html')).href);
  await page.waitForSelector('body[data-ready="true"]');
  const charts: { id: string; points: number; pixels: number[] }[] = await page.evaluate(COUNT_SERIES_PIXELS);
  t.same(
    charts.map((c) => c.id),
    ['throughput', 'latency', 'distribution', 'errors', 'capacity', 'server-cpu', 'server-rss', 'server-mailbox'],
  );
  for (const chart of charts) {
    t.ok(chart.points >= 2, `${chart.id}: ${chart.points} points`);
    t.ok(
      chart.pixels.every((n) => n > 20),
      `${chart.id}: series pixels ${chart.pixels.join(', ')}`,
    );
  }
  t.same(
    requests.filter((u) => !u.startsWith('file:')),
    [],
    'nothing fetched from the network',
  );
  await page.screenshot({ path: artifactPath('load-report.png'), fullPage: true });
});

t.test('without /metrics the report says server metrics are unavailable', async (t) => {
  const url = await startStub(t, (req, res) => {
    res.statusCode = req.url === '/metrics' ? 404 : 200;
    res.end();
  });
  const html = join(tempDir(t), 'r.html');
  const run = await runLoadCli([
    '--target',
    url,
    '--scenario',
    'gateway',
    '--paths',
    '/a',
    '--rate',
    '20/s',
    '--duration',
    '1s',
    '--html',
    html,
  ]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /server metrics unavailable: GET \/metrics answered 404/);
  const browser = await launchBrowser(t);
  const page = await browser.newPage();
  await page.goto(pathToFileURL(html).href);
  await page.waitForSelector('body[data-ready="true"]');
  t.match(await page.textContent('#server-unavailable'), /server metrics unavailable: GET \/metrics answered 404/);
  t.equal(await page.locator('.chart canvas').count(), 4, 'throughput, latency, distribution and errors still drawn');
});
