// Thread: any
// Every check of one definition, in order: its shape (parse.ts), the rules across its fields
// (rules.ts), its flow (flow.ts), then, compiled, whether every screen fits (fit.ts). The server's load (start,
// SIGHUP, file change) and `npm run ussd:check` both call this, so the checker refuses exactly what a start does.
import { compileService, type CompiledService } from './compile.js';
import type { ServiceDefinition } from './definition.js';
import { screenProblems } from './fit.js';
import { flowProblems } from './flow.js';
import { parseServiceText, type Problem } from './parse.js';
import { ruleProblems } from './rules.js';

export interface Checked {
  /** The definition, when its shape and cross-field rules passed (so it compiles). */
  definition?: ServiceDefinition;
  /** Compiled, when the definition compiles (with or without flow or screen problems). */
  compiled?: CompiledService;
  problems: Problem[];
}

/** Checks one definition file's text; `file` names it in the problems. */
export function checkServiceText(text: string, file: string): Checked {
  const parsed = parseServiceText(text, file);
  if (!parsed.ok) return { problems: parsed.problems };
  const { definition, lineOf } = parsed;
  const rules = ruleProblems(definition, file, lineOf);
  if (rules.length > 0) return { problems: rules };
  const compiled = compileService(definition);
  const problems = [...flowProblems(definition, file, lineOf), ...screenProblems(compiled, file, lineOf)];
  return { definition, compiled, problems };
}
