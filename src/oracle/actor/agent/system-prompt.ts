// Thread: actor host
// The system prompt of a turn: who the oracle is, the time, and the user's saved preferences.
import type { UserPreferences } from '../../plugins/user-preferences/schema.js';

export interface SystemPromptInput {
  oracleName: string;
  preferences?: UserPreferences | null;
  timezone?: string;
  now?: Date;
}

export const PREFERENCES_HEADING = '## User Preferences';

/** One line per saved field, `- <label>: <value>`. The built-in agent reads them back with the same labels. */
export const PREFERENCE_LABELS = {
  userName: 'Call the user',
  agentName: 'Your name',
  language: 'Reply language',
  formality: 'Formality',
  tone: 'Tone',
  customInstructions: 'Custom instructions',
} as const satisfies Partial<Record<keyof UserPreferences, string>>;

type PreferenceField = keyof typeof PREFERENCE_LABELS;

function currentTime(now: Date, timezone: string | undefined): string {
  if (timezone) {
    try {
      return `${now.toLocaleString('en-GB', { timeZone: timezone, dateStyle: 'full', timeStyle: 'short' })} (${timezone})`;
    } catch {
      // An unknown time zone name: fall back to UTC below rather than fail the turn.
    }
  }
  return `${now.toISOString()} (UTC)`;
}

function preferencesSection(preferences: UserPreferences): string[] {
  const lines: string[] = [];
  for (const [field, label] of Object.entries(PREFERENCE_LABELS) as [PreferenceField, string][]) {
    const value = preferences[field];
    // Newlines would break the one-line-per-field format (custom instructions may have them).
    if (value) lines.push(`- ${label}: ${value.replace(/\s*\n\s*/g, ' ')}`);
  }
  if (lines.length === 0) return [];
  return [
    PREFERENCES_HEADING,
    'The user saved these preferences. Follow them in every reply unless the user asks otherwise in this conversation.',
    ...lines,
  ];
}

export function buildSystemPrompt(input: SystemPromptInput): string {
  const name = input.preferences?.agentName || input.oracleName;
  const lines = [
    `You are ${name}, an AI oracle chatting with a user.`,
    `Current time: ${currentTime(input.now ?? new Date(), input.timezone)}.`,
    'When the user asks for a lasting change in how you behave (what to call them or you, language, tone, ' +
      'formality), save it with the set_user_preferences tool, then confirm briefly.',
  ];
  const section = input.preferences ? preferencesSection(input.preferences) : [];
  if (section.length > 0) lines.push('', ...section);
  return lines.join('\n');
}

/** Reads the "User Preferences" section of a system prompt back into fields (used by the built-in agent). */
export function readPreferencesSection(systemPrompt: string): Partial<Record<PreferenceField, string>> {
  const start = systemPrompt.indexOf(PREFERENCES_HEADING);
  if (start < 0) return {};
  const fields: Partial<Record<PreferenceField, string>> = {};
  const byLabel = new Map<string, PreferenceField>(
    Object.entries(PREFERENCE_LABELS).map(([field, label]) => [label, field as PreferenceField]),
  );
  for (const line of systemPrompt.slice(start).split('\n').slice(1)) {
    if (line.startsWith('## ')) break;
    const match = /^- ([^:]+): (.*)$/.exec(line);
    const field = match && byLabel.get(match[1]);
    if (field) fields[field] = match[2];
  }
  return fields;
}
