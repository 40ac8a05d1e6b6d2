// Thread: any
// Reads a services directory (USSD_SERVICES_DIR, or the shipped ussd-services/), one definition per
// .yaml/.yml/.json file, checks each (schema and rules) and the set (one file per service id, one service per
// code), and compiles them. All or nothing: with any problem, no service of the directory is used.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileService, type CompiledService } from './compile.js';
import type { ServiceDefinition } from './definition.js';
import { checkServiceText } from './check.js';
import { DEFINITION_FILE, type Problem } from './parse.js';

export type Loaded = { ok: true; services: CompiledService[] } | { ok: false; problems: Problem[] };

/** A definition and where it came from (its file), as read from a directory or a published set. */
export interface Source {
  file: string;
  definition: ServiceDefinition;
}

/** Reads and checks every definition file of `dir`. */
export function readServicesDir(dir: string): { ok: true; sources: Source[] } | { ok: false; problems: Problem[] } {
  const checked = checkServicesDir(dir);
  return checked.problems.length > 0
    ? { ok: false, problems: checked.problems }
    : { ok: true, sources: checked.sources };
}

/** A directory's checked files: the sources that passed on their own, and every problem (the set's included). */
export function checkServicesDir(dir: string): { sources: Source[]; compiled: CompiledService[]; problems: Problem[] } {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((name) => DEFINITION_FILE.test(name))
      .sort();
  } catch (error) {
    const message = `cannot read the directory: ${(error as Error).message}`;
    return { sources: [], compiled: [], problems: [{ file: dir, line: 0, path: '', message }] };
  }
  if (names.length === 0) {
    const message = 'no service definition (.yaml, .yml or .json) in it';
    return { sources: [], compiled: [], problems: [{ file: dir, line: 0, path: '', message }] };
  }
  const problems: Problem[] = [];
  const sources: Source[] = [];
  const compiled: CompiledService[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      problems.push({ file, line: 0, path: '', message: `cannot read: ${(error as Error).message}` });
      continue;
    }
    const checked = checkServiceText(text, file);
    problems.push(...checked.problems);
    if (checked.compiled && checked.definition) {
      compiled.push(checked.compiled);
      if (checked.problems.length === 0) sources.push({ file, definition: checked.definition });
    }
  }
  problems.push(...setProblems(sources));
  return { sources, compiled, problems };
}

/** Compiles checked sources. */
export function compileSources(sources: readonly Source[]): CompiledService[] {
  return sources.map((source) => compileService(source.definition));
}

/** Reads, checks and compiles a directory. */
export function loadServicesDir(dir: string): Loaded {
  const read = readServicesDir(dir);
  return read.ok ? { ok: true, services: compileSources(read.sources) } : read;
}

/** Problems of a set of services: two files of one id, two services of one code. */
export function setProblems(sources: readonly Source[]): Problem[] {
  const problems: Problem[] = [];
  const ids = new Map<string, string>();
  const codes = new Map<string, string>();
  for (const { file, definition } of sources) {
    const other = ids.get(definition.id);
    if (other)
      problems.push({ file, line: 1, path: 'id', message: `service ${definition.id} is also defined in ${other}` });
    ids.set(definition.id, file);
    for (const entry of definition.serviceCodes) {
      const code = typeof entry === 'string' ? entry : entry.code;
      const owner = codes.get(code);
      if (owner && owner !== definition.id)
        problems.push({ file, line: 1, path: 'serviceCodes', message: `${code} is claimed by service ${owner} too` });
      codes.set(code, definition.id);
    }
  }
  return problems;
}

/** Problems as an operator reads them: `file:line: path: message`, one per line. */
export function formatProblems(problems: readonly Problem[]): string {
  return problems.map((p) => `${p.file}:${p.line}: ${p.path ? `${p.path}: ` : ''}${p.message}`).join('\n');
}
