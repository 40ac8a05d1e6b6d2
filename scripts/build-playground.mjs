// Bundles the browser playground (web/playground) with esbuild into dist/playground: the page, its styles,
// uPlot's styles and one script with the UCAN libraries inside, so the page loads nothing from elsewhere.
// Run by `npm run build` after tsc (which type-checks web/ with its own tsconfig).
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const source = join(root, 'web/playground');
const out = join(root, 'dist/playground');
mkdirSync(out, { recursive: true });

await build({
  entryPoints: [join(source, 'src/main.ts')],
  outfile: join(out, 'playground.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: ['es2022'],
  minify: true,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});

for (const file of ['index.html', 'favicon.svg']) copyFileSync(join(source, file), join(out, file));
// One stylesheet: uPlot's, then the page's.
const uplotCss = readFileSync(join(root, 'node_modules/uplot/dist/uPlot.min.css'), 'utf8');
writeFileSync(join(out, 'playground.css'), `${uplotCss}\n${readFileSync(join(source, 'playground.css'), 'utf8')}`);
