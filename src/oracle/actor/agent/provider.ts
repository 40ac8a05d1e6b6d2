// Runs on: actor hosts (worker threads) only.
// Chooses the model: an OpenAI-compatible server when LLM_BASE_URL is set, else the built-in agent.
import { builtinProvider } from './builtin-provider.js';
import { openAiProvider } from './openai-provider.js';
import type { Provider } from '../../agent-types.js';

/** The configuration the provider reads (a subset of Config). */
export interface ProviderConfig {
  readonly LLM_BASE_URL?: string;
  readonly LLM_API_KEY?: string;
  /** Defaults to gpt-4o-mini, as in src/oracle/config.ts. */
  readonly LLM_MODEL?: string;
}

export function createProvider(config: ProviderConfig): Provider {
  if (!config.LLM_BASE_URL) return builtinProvider();
  return openAiProvider({ baseUrl: config.LLM_BASE_URL, apiKey: config.LLM_API_KEY, model: config.LLM_MODEL ?? 'gpt-4o-mini' });
}
