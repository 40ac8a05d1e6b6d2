// Thread: any (and the checker)
// Texts with `{{name}}` placeholders, split once at load into literal parts and
// names, so a step only concatenates. Plain substitution: a name is looked up, never evaluated.

/** A placeholder: the value's name, and the text used when the value is missing or empty. */
export interface Slot {
  name: string;
  fallback: string;
}

/** A literal (no placeholder) or its parts, literals and slots alternating. */
export type Template = string | readonly (string | Slot)[];

const PLACEHOLDER = /\{\{\s*([A-Za-z][A-Za-z0-9_.-]*)\s*(?:\|([^}]*))?\}\}/g;

/** Splits `text` into a Template (the text itself when it has no placeholder). */
export function compileTemplate(text: string): Template {
  const parts: (string | Slot)[] = [];
  let last = 0;
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (match.index > last) parts.push(text.slice(last, match.index));
    parts.push({ name: match[1] ?? '', fallback: match[2] ?? '' });
    last = match.index + match[0].length;
  }
  if (parts.length === 0) return text;
  if (last < text.length) parts.push(text.slice(last));
  return parts;
}

/** The names a template reads. */
export function slotsOf(template: Template): string[] {
  return typeof template === 'string' ? [] : template.flatMap((part) => (typeof part === 'string' ? [] : [part.name]));
}

/**
 * The text with each slot replaced by `lookup(name)`, or its fallback when that is undefined or empty; `encode`
 * (a query path's URL-encoding) applies to what fills a slot, never to the template's own text.
 */
export function fill(
  template: Template,
  lookup: (name: string) => string | undefined,
  encode?: (value: string) => string,
): string {
  if (typeof template === 'string') return template;
  let text = '';
  for (const part of template) {
    if (typeof part === 'string') text += part;
    else {
      const value = lookup(part.name);
      const filled = value === undefined || value === '' ? part.fallback : value;
      text += encode ? encode(filled) : filled;
    }
  }
  return text;
}

/** Cuts `text` to `max` characters, marking the cut with "..". */
export function shorten(text: string, max: number): string {
  const limit = Math.max(3, Math.floor(max));
  return text.length <= limit ? text : `${text.slice(0, limit - 2)}..`;
}
