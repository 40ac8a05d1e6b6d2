// Thread: any
// The user-preferences record and the schema of a change to it (the `set_user_preferences` arguments).
// Field names and limits follow the reference runtime so existing clients read the same object.
import * as v from 'valibot';
import { toJsonSchema } from '@valibot/to-json-schema';

export const FORMALITIES = [
  'casual',
  'friendly',
  'neutral',
  'semi-formal',
  'professional',
  'formal',
  'technical',
  'academic',
] as const;
export type Formality = (typeof FORMALITIES)[number];

/** Longest accepted `tone`: the reference leaves it free, a bound keeps the record (and the prompt) small. */
export const TONE_MAX = 200;

export interface UserPreferences {
  agentName?: string;
  userName?: string;
  language?: string;
  tone?: string;
  formality?: Formality;
  customInstructions?: string;
  /** ISO 8601, set by the server on every write. */
  updatedAt: string;
}

function limitedText(field: string, max: number, description: string) {
  return v.optional(
    v.nullable(
      v.pipe(
        v.string(`${field} must be a string`),
        v.trim(),
        v.maxLength(max, `${field} must be at most ${max} characters`),
        v.description(description),
      ),
    ),
  );
}

/** A change: every field optional; `null` (or an empty string) removes a field; unknown keys are dropped. */
export const preferencesUpdateSchema = v.pipe(
  v.object({
    agentName: limitedText(
      'agentName',
      80,
      'What the user wants to call you, exactly as they asked (max 80 characters).',
    ),
    userName: limitedText('userName', 80, 'What the user wants to be called (max 80 characters).'),
    language: limitedText(
      'language',
      20,
      "Preferred reply language as a name or code, e.g. 'French' or 'fr' (max 20 characters).",
    ),
    tone: limitedText('tone', TONE_MAX, "A short tone label, e.g. 'warm and playful' or 'concise and dry'."),
    formality: v.optional(
      v.nullable(
        v.pipe(
          v.picklist(FORMALITIES, `formality must be one of ${FORMALITIES.join(', ')}`),
          v.description('How formal replies should be.'),
        ),
      ),
    ),
    customInstructions: limitedText(
      'customInstructions',
      2000,
      'Self-contained instructions for every later reply; merge with the existing ones (max 2000 characters).',
    ),
  }),
  v.check(
    (update) => Object.values(update).some((value) => value !== undefined),
    'give at least one preference to change',
  ),
);

export type PreferencesUpdate = v.InferOutput<typeof preferencesUpdateSchema>;

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: string[] };

/** Validates a change; issues are short sentences naming the field. */
export function parsePreferencesUpdate(input: unknown): ValidationResult<PreferencesUpdate> {
  const result = v.safeParse(preferencesUpdateSchema, input);
  if (result.success) return { ok: true, value: result.output };
  return { ok: false, issues: result.issues.map((issue) => issue.message) };
}

/** Applies a change to a record: given fields replace, null/empty removes, others stay. */
export function mergePreferences(
  current: UserPreferences | null | undefined,
  update: PreferencesUpdate,
  now: Date,
): UserPreferences {
  const merged: Record<string, unknown> = { ...(current ?? {}) };
  for (const [key, value] of Object.entries(update)) {
    if (value === undefined) continue;
    if (value === null || value === '') delete merged[key];
    else merged[key] = value;
  }
  merged.updatedAt = now.toISOString();
  return merged as unknown as UserPreferences;
}

/** Some OpenAI-compatible servers reject a `$schema` keyword inside tool parameters. */
function withoutDialect(schema: object): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = schema as Record<string, unknown>;
  return rest;
}

/** JSON schema of the `set_user_preferences` arguments, generated from the validating schema. */
export const preferencesUpdateJsonSchema = withoutDialect(
  toJsonSchema(preferencesUpdateSchema, { errorMode: 'ignore' }),
);

/** The stored record, as GET /user-preferences answers it (for the OpenAPI document). */
export const UserPreferencesRecordSchema = v.object({
  agentName: v.optional(v.pipe(v.string(), v.maxLength(80))),
  userName: v.optional(v.pipe(v.string(), v.maxLength(80))),
  language: v.optional(v.pipe(v.string(), v.maxLength(20))),
  tone: v.optional(v.pipe(v.string(), v.maxLength(TONE_MAX))),
  formality: v.optional(v.picklist(FORMALITIES)),
  customInstructions: v.optional(v.pipe(v.string(), v.maxLength(2000))),
  updatedAt: v.pipe(v.string(), v.isoTimestamp()),
});
