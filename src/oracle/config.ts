// Environment variables of the oracle face.
import * as v from 'valibot';
import { boolean, integer, text } from '../env-schema.js';

export const oracleEnv = {
  /** OpenAI-compatible chat-completions server (e.g. http://127.0.0.1:11434/v1); unset = the built-in agent. */
  LLM_BASE_URL: v.optional(v.pipe(v.string(), v.trim(), v.url('must be a URL such as https://api.openai.com/v1'))),
  LLM_API_KEY: text(),
  LLM_MODEL: text('gpt-4o-mini'),
  /** Bound on model calls per message (each tool round trip is one more). */
  AGENT_MAX_STEPS: integer(8, 1, 50),
  CREDITS_ENABLED: boolean(false),
  CREDITS_INITIAL: integer(10, 0),
  CREDITS_PER_MESSAGE: integer(1, 0),
};
