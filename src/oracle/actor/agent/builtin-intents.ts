// Thread: actor host
// What the built-in agent understands in a user message: preference requests ("call me Ada",
// "call yourself Sage", "reply in French", "be more formal"), explicit tool use ("use <tool> {json}"),
// and everything else (chat).

export type PreferenceRequest = Partial<Record<'userName' | 'agentName' | 'language' | 'formality', string>>;

export type Intent =
  | { type: 'preferences'; update: PreferenceRequest }
  | { type: 'use-tool'; toolName: string; argsText: string }
  | { type: 'chat' };

// A value ends at punctuation, at "and" or "&" (the next request), at "please" / "from now on", or at the end.
const END = String.raw`(?=\s*(?:[.,!?;\n&]|\band\b|\bplease\b|\bfrom now on\b|$))`;

const PATTERNS: [keyof PreferenceRequest, RegExp][] = [
  ['userName', new RegExp(String.raw`\bcall me\s+(.+?)${END}`, 'iu')],
  ['agentName', new RegExp(String.raw`\bcall yourself\s+(.+?)${END}`, 'iu')],
  ['language', new RegExp(String.raw`\b(?:reply|respond|answer|write|speak)\s+in\s+(.+?)${END}`, 'iu')],
  ['formality', /\bbe\s+more\s+(formal|casual)\b/i],
];

const USE_TOOL = /^\s*use\s+([A-Za-z0-9_.:-]+)(?:\s+([\s\S]*))?$/i;

function unquote(value: string): string {
  return value
    .trim()
    .replace(/^(["'“‘])(.*)(["'”’])$/u, '$2')
    .trim();
}

export function readPreferenceRequest(text: string): PreferenceRequest {
  const update: PreferenceRequest = {};
  for (const [field, pattern] of PATTERNS) {
    const match = pattern.exec(text);
    if (!match) continue;
    const value = field === 'formality' ? match[1].toLowerCase() : unquote(match[1]);
    if (value) update[field] = value;
  }
  return update;
}

export function readIntent(text: string): Intent {
  const use = USE_TOOL.exec(text);
  if (use) return { type: 'use-tool', toolName: use[1], argsText: (use[2] ?? '').trim() };
  const update = readPreferenceRequest(text);
  if (Object.keys(update).length > 0) return { type: 'preferences', update };
  return { type: 'chat' };
}

export type ParsedArgs = { ok: true; args: Record<string, unknown> } | { ok: false; problem: string };

/** Arguments of "use <tool> {json}": empty means `{}`; otherwise a JSON object. */
export function parseToolArgs(argsText: string): ParsedArgs {
  if (argsText === '') return { ok: true, args: {} };
  let value: unknown;
  try {
    value = JSON.parse(argsText);
  } catch (error) {
    return { ok: false, problem: `not valid JSON (${(error as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, problem: 'not a JSON object' };
  return { ok: true, args: value as Record<string, unknown> };
}
