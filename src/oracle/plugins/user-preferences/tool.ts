// Thread: actor host
// The `set_user_preferences` server tool: validates the model's arguments and merges them into the stored preferences.
import type { Tool } from '../../chat/agent-types.js';
import { parsePreferencesUpdate, preferencesUpdateJsonSchema } from './schema.js';
import type { PreferencesStore } from './store.js';

export const SET_USER_PREFERENCES = 'set_user_preferences';

const DESCRIPTION =
  "Save the user's lasting preferences about how you behave: what to call them (userName), what they call you " +
  '(agentName), reply language, tone, formality, custom instructions. Call it when the user asks for a lasting ' +
  "change ('call me Ada', 'reply in French', 'be more formal'); not for one-off formatting requests or facts " +
  'about the user. Give only the fields to change; a field set to null is removed. The saved preferences appear ' +
  'in your system prompt under "User Preferences" from the next message on.';

export class PreferencesValidationError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid preferences: ${issues.join('; ')}`);
    this.name = 'PreferencesValidationError';
  }
}

export function setUserPreferencesTool(preferences: PreferencesStore): Tool {
  return {
    name: SET_USER_PREFERENCES,
    description: DESCRIPTION,
    parameters: preferencesUpdateJsonSchema,
    kind: 'server',
    async execute(args, context) {
      const parsed = parsePreferencesUpdate(args);
      if (!parsed.ok) throw new PreferencesValidationError(parsed.issues);
      const saved = await preferences.merge(context.userDid, context.oracleDid, parsed.value);
      return `Saved. The user's preferences are now: ${JSON.stringify(saved)}`;
    },
  };
}
