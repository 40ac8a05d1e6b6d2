#!/usr/bin/env node
// Lists the packages the shipped code (dist/src, dist/workers) imports and compares them with package.json's
// dependencies: a package imported at run time but kept in devDependencies installs in development and crashes a
// production install (`npm ci --omit=dev`) with ERR_MODULE_NOT_FOUND. Prints every import and where it is from;
// exits 1 when one is not a dependency (or optional dependency), or when a dependency is imported by nothing.
//   node scripts/check-runtime-deps.mjs [--json]
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';

const ROOT = new URL('..', import.meta.url).pathname;
const SHIPPED = ['dist/src', 'dist/workers'];
/** Dependencies loaded by a name held in a variable, which no literal import shows. */
const LOADED_BY_NAME = new Map([
  ['@btc-vision/uwebsockets.js', 'src/http/uws-native.ts tries the native builds by name'],
  ['uWebSockets.js', 'src/http/uws-native.ts tries the native builds by name'],
]);

// Static imports and re-exports, dynamic imports, require(), require.resolve() and createRequire(...)(...) with a
// literal specifier (no whitespace or `$`: a template's text such as "from '${x}'" names no package).
const SPECIFIER =
  /(?:(?:^|[\s}*])from\s*|\bimport\s*\(\s*|\bimport\s+|\brequire(?:\.resolve)?\s*\(\s*|\bcreateRequire\([^()]*\)\s*\(\s*)(['"])([^'"\s$]+)\1/g;
const builtins = new Set(builtinModules);

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* files(path);
    else if (entry.name.endsWith('.js')) yield path;
  }
}

/** The package a bare specifier names (`@scope/name/sub` -> `@scope/name`), or undefined for relative and builtin. */
function packageOf(specifier) {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return undefined;
  if (specifier.startsWith('data:') || specifier.startsWith('file:')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtins.has(name) ? undefined : name;
}

/** Package name -> the shipped files that import it. */
export function runtimeImports(root = ROOT) {
  const found = new Map();
  for (const dir of SHIPPED) {
    for (const file of files(join(root, dir))) {
      // Comments can quote import lines; only code counts.
      const code = readFileSync(file, 'utf8')
        .replace(/\/\*[\s\S]*?\*\//g, '')
        .replace(/^\s*\/\/.*$/gm, '');
      for (const match of code.matchAll(SPECIFIER)) {
        const name = packageOf(match[2]);
        if (!name) continue;
        if (!found.has(name)) found.set(name, new Set());
        found.get(name).add(relative(root, file));
      }
    }
  }
  return found;
}

export function compare(root = ROOT) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})]);
  const imports = runtimeImports(root);
  const missing = [...imports.keys()].filter((name) => !declared.has(name)).sort();
  const unused = [...declared].filter((name) => !imports.has(name) && !LOADED_BY_NAME.has(name)).sort();
  return { imports, missing, unused, dev: Object.keys(pkg.devDependencies ?? {}) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { imports, missing, unused, dev } = compare();
  if (process.argv.includes('--json')) {
    console.log(JSON.stringify({ imports: [...imports.keys()].sort(), missing, unused }));
  } else {
    for (const [name, from] of [...imports].sort(([a], [b]) => a.localeCompare(b)))
      console.log(
        `${missing.includes(name) ? 'MISSING' : 'ok     '} ${name}  (${[...from][0]}${from.size > 1 ? ` +${from.size - 1}` : ''})`,
      );
    for (const name of missing)
      console.log(
        `${name} is imported by shipped code but is ${dev.includes(name) ? 'a devDependency' : 'not declared'}: move it to dependencies`,
      );
    for (const name of unused) console.log(`${name} is a dependency that no shipped file imports`);
  }
  process.exit(missing.length + unused.length === 0 ? 0 : 1);
}
