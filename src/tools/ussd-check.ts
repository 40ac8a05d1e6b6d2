// Thread: main
// `npm run ussd:check -- DIR|FILE ... [--render]`: checks USSD service definitions as the server's load does (the
// same checks, src/ussd/services/check.ts): shape, unknown states, missing translations, unreachable states, dead
// ends, duplicate keys, keys that clash with navigation, and whether every state fits the screen limit in every
// language on every page. Prints each problem as `file:line: path: problem`; exits 1 on any, 0 when clean.
// --render prints every screen as a phone shows it.
import { readFileSync, statSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { checkServiceText } from '../ussd/services/check.js';
import type { CompiledService } from '../ussd/services/compile.js';
import { checkServicesDir, formatProblems, setProblems, type Source } from '../ussd/services/load.js';
import type { Problem } from '../ussd/services/parse.js';
import { everyScreen } from '../ussd/services/screens.js';

export const USAGE = `Usage: npm run ussd:check -- [--render] DIR|FILE ...

  DIR       a services directory (as USSD_SERVICES_DIR): every .yaml, .yml and .json file in it, checked as a set
  FILE      one definition file
  --render  also print every screen as a phone shows it: each state, language and page (values as <name>)
  --help    this text

Exits 0 when every definition is clean, 1 when any has a problem (each printed as file:line: path: problem),
2 on a bad command line. docs/ussd-services.md describes the format and every check.`;

export interface CheckResult {
  problems: Problem[];
  services: CompiledService[];
}

/** Checks each path (a directory as one set, or a file alone); every path's problems and compiled services. */
export function checkPaths(paths: readonly string[]): CheckResult {
  const problems: Problem[] = [];
  const services: CompiledService[] = [];
  const sources: Source[] = [];
  for (const path of paths) {
    let directory: boolean;
    try {
      directory = statSync(path).isDirectory();
    } catch (error) {
      problems.push({ file: path, line: 0, path: '', message: `cannot read: ${(error as Error).message}` });
      continue;
    }
    if (directory) {
      const checked = checkServicesDir(path);
      problems.push(...checked.problems);
      services.push(...checked.compiled);
      continue;
    }
    const checked = checkServiceText(readFileSync(path, 'utf8'), path);
    problems.push(...checked.problems);
    if (checked.compiled) services.push(checked.compiled);
    if (checked.definition && checked.problems.length === 0)
      sources.push({ file: path, definition: checked.definition });
  }
  // Files given one by one are served together too: one service per id and per code among them.
  problems.push(...setProblems(sources));
  return { problems, services };
}

/** Every screen of `service`, as --render prints it. */
export function renderService(service: CompiledService): string {
  const codes = service.definition.serviceCodes.map((entry) =>
    typeof entry === 'string' ? entry : `${entry.code} (at ${entry.start})`,
  );
  const lines = [`=== ${service.key} ${service.name}: ${codes.join(', ')}; limit ${service.limit}`];
  for (const screen of everyScreen(service)) {
    const where = screen.via === 'exit' ? 'exit' : `page ${screen.page}/${screen.pages}`;
    lines.push(`--- ${screen.state} [${screen.language}] ${where}, ${screen.answer.length}/${service.limit}`);
    lines.push(screen.answer);
  }
  return lines.join('\n');
}

export function main(argv: string[], out: (text: string) => void, err: (text: string) => void): number {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    err(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    out(USAGE);
    return 0;
  }
  if (parsed.positionals.length === 0) {
    err(`Name a services directory or a definition file.\n\n${USAGE}`);
    return 2;
  }
  const { problems, services } = checkPaths(parsed.positionals);
  if (parsed.values.render) for (const service of services) out(renderService(service));
  if (problems.length > 0) {
    err(formatProblems(problems));
    err(`${problems.length} problem${problems.length === 1 ? '' : 's'}`);
    return 1;
  }
  out(`ok: ${services.map((service) => service.key).join(', ')}`);
  return 0;
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: { render: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = main(
    process.argv.slice(2),
    (text) => process.stdout.write(`${text}\n`),
    (text) => process.stderr.write(`${text}\n`),
  );
}
