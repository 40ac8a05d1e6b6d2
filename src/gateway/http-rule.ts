// Thread: main
// The `google.api.http` option of a method, as protobufjs exposes it: parsed from a .proto file
// (method.parsedOptions) or decoded from a descriptor (MethodOptions extension field).
import type protobuf from 'protobufjs';

export interface HttpRule {
  get?: string;
  put?: string;
  post?: string;
  delete?: string;
  patch?: string;
  custom?: { kind?: string; path?: string };
  body?: string;
  additional_bindings?: HttpRule | HttpRule[];
}

/** The GET path templates of a rule: its own first, then its additional bindings in order. */
export function getPatterns(rule: HttpRule | undefined): string[] {
  if (!rule) return [];
  const patterns: string[] = [];
  if (rule.get) patterns.push(rule.get);
  else if (rule.custom?.kind?.toUpperCase() === 'GET' && rule.custom.path) patterns.push(rule.custom.path);
  const more = rule.additional_bindings;
  for (const binding of Array.isArray(more) ? more : more ? [more] : []) patterns.push(...getPatterns(binding));
  return patterns;
}

/** The rule written in a .proto file: `option (google.api.http) = { get: "..." }`. */
export function ruleFromParsedOptions(method: protobuf.Method): HttpRule | undefined {
  for (const option of method.parsedOptions ?? []) {
    const rule = (option as Record<string, unknown>)['(google.api.http)'];
    if (rule && typeof rule === 'object') return rule as HttpRule;
  }
  return undefined;
}

/** The rule in HttpRule message form: additional_bindings always a list (.proto parsing gives one binding as an object). */
export function normalizeRule(rule: HttpRule): HttpRule {
  const more = rule.additional_bindings;
  if (more === undefined) return rule;
  return { ...rule, additional_bindings: (Array.isArray(more) ? more : [more]).map(normalizeRule) };
}
