// The walls `npm run lint` holds besides Biome and the layer rules: every source file in src/ and workers/ at most
// 400 lines, every doc (README.md, bench/README.md, docs/*.md) at most 300, and every source file opening with the
// one header that says which thread runs it, `// Thread: <thread>` with an optional qualifier after it:
//   main        the main thread (front door, composition root), or a tool's own process
//   actor host  an actor host worker (workers/actor-host.ts)
//   CPU pool    the piscina pool's worker (workers/crypto.ts)
//   any         more than one of them (shared code, types)
// A header is checked against what each thread loads (the dependency graph without type-only imports, as in
// .dependency-cruiser.threads.cjs): a file that says `main` must not be reachable from a worker entry, one that says
// `actor host` or `CPU pool` not from another thread's entry. Usage: node scripts/check-walls.mjs [root]
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const MAX_SOURCE_LINES = 400;
export const MAX_DOC_LINES = 300;
export const THREADS = ['main', 'actor host', 'CPU pool', 'any'];
const HEADER = /^\/\/ Thread: (main|actor host|CPU pool|any)(?=$|[ ,(])/;
/** Where each thread starts: a file one thread's entry reaches is loaded on that thread. */
const ENTRIES = {
  main: (root) => ['src/app/main.ts', ...list(root, 'src/tools', /\.ts$/, false)],
  'actor host': () => ['workers/actor-host.ts'],
  'CPU pool': () => ['workers/crypto.ts'],
};

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Files under `dir` (relative to root) whose names match, recursively unless told otherwise. */
function list(root, dir, pattern, deep = true) {
  const at = join(root, dir);
  if (!existsSync(at)) return [];
  return readdirSync(at, { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return deep ? list(root, path, pattern) : [];
    return pattern.test(entry.name) ? [path] : [];
  });
}

const lineCount = (text) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

/** The runtime import graph of src/ and workers/ (type-only imports dropped), from dependency-cruiser. */
function runtimeGraph(root) {
  const bin = join(repo, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');
  const config = join(repo, '.dependency-cruiser.threads.cjs');
  const dirs = ['src', 'workers'].filter((dir) => existsSync(join(root, dir)));
  const run = spawnSync(process.execPath, [bin, ...dirs, '--config', config, '--output-type', 'json'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.status !== 0 && !run.stdout) throw new Error(`dependency-cruiser failed: ${run.stderr}`);
  const graph = new Map();
  for (const module of JSON.parse(run.stdout).modules) {
    const runtime = module.dependencies.filter((d) => !d.dependencyTypes?.includes('type-only'));
    graph.set(
      module.source,
      runtime.map((d) => d.resolved),
    );
  }
  return graph;
}

/** Every file reachable from `entries`, each with the file that first reached it (for the explanation). */
function reach(graph, entries) {
  const parent = new Map(entries.filter((entry) => graph.has(entry)).map((entry) => [entry, undefined]));
  const queue = [...parent.keys()];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const next of graph.get(file) ?? []) {
      if (parent.has(next)) continue;
      parent.set(next, file);
      queue.push(next);
    }
  }
  return parent;
}

function chain(parent, file) {
  const path = [];
  for (let at = file; at !== undefined; at = parent.get(at)) path.unshift(at);
  return path.join(' -> ');
}

/** The problems of the tree at `root`, one line each; none means every wall holds. */
export function wallProblems(root) {
  const problems = [];
  const sources = ['src', 'workers'].flatMap((dir) => list(root, dir, /\.ts$/));
  const docs = [
    ...['README.md', 'bench/README.md'].filter((doc) => existsSync(join(root, doc))),
    ...list(root, 'docs', /\.md$/),
  ];
  const headers = new Map();
  for (const file of sources) {
    const text = readFileSync(join(root, file), 'utf8');
    const lines = lineCount(text);
    if (lines > MAX_SOURCE_LINES)
      problems.push(`${file}: ${lines} lines, over ${MAX_SOURCE_LINES}: split it into modules with one job each`);
    const first = text.slice(0, text.indexOf('\n') >>> 0);
    const header = HEADER.exec(first);
    if (!header)
      problems.push(`${file}: the first line must say which thread runs it: // Thread: ${THREADS.join(' | ')}`);
    else headers.set(file, header[1]);
  }
  for (const file of docs) {
    const lines = lineCount(readFileSync(join(root, file), 'utf8'));
    if (lines > MAX_DOC_LINES) problems.push(`${file}: ${lines} lines, over ${MAX_DOC_LINES}: split it by topic`);
  }
  if (headers.size === 0) return problems;
  const graph = runtimeGraph(root);
  const reached = Object.fromEntries(Object.entries(ENTRIES).map(([thread, of]) => [thread, reach(graph, of(root))]));
  for (const [file, thread] of headers) {
    if (thread === 'any') continue;
    for (const [other, parent] of Object.entries(reached)) {
      if (other === thread || !parent.has(file)) continue;
      problems.push(`${file}: says "Thread: ${thread}" but the ${other} thread loads it: ${chain(parent, file)}`);
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = process.argv[2] ?? repo;
  const problems = wallProblems(root);
  for (const problem of problems) console.error(problem);
  if (problems.length > 0) {
    console.error(`${problems.length} wall(s) broken in ${relative(process.cwd(), root) || '.'}`);
    process.exit(1);
  }
  console.log('✔ walls hold: files within their lengths, every source file says its thread');
}
