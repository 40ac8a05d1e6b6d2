// Thread: actor host
// Chooses the model: an OpenAI-compatible server when LLM_BASE_URL is set, else the built-in agent; per turn,
// the catalogue's model a message asked for (models.ts).
import { builtinProvider } from './builtin-provider.js';
import { openAiProvider } from './openai-provider.js';
import type { Provider } from '../../chat/agent-types.js';
import type { ModelCatalogue } from '../../chat/models.js';

/** The configuration the provider reads (a subset of Config). */
export interface ProviderConfig {
  readonly LLM_BASE_URL?: string;
  readonly LLM_API_KEY?: string;
  /** Defaults to gpt-4o-mini, as in src/oracle/config.ts. */
  readonly LLM_MODEL?: string;
}

export function createProvider(config: ProviderConfig): Provider {
  if (!config.LLM_BASE_URL) return builtinProvider();
  return openAiProvider({
    baseUrl: config.LLM_BASE_URL,
    apiKey: config.LLM_API_KEY,
    model: config.LLM_MODEL ?? 'gpt-4o-mini',
  });
}

/** The provider of each model of the catalogue (the default for `undefined`), made once per model. */
export function providersOf(config: ProviderConfig, catalogue: ModelCatalogue): (modelId?: string) => Provider {
  const made = new Map<string, Provider>();
  return (modelId = catalogue.defaultId) => {
    let provider = made.get(modelId);
    if (provider) return provider;
    // The front door checked the id against the same catalogue; a stale one (a changed catalogue on another node) gets the default.
    const model = catalogue.find(modelId) ?? catalogue.find(catalogue.defaultId)!;
    provider =
      model.provider === 'builtin' || !config.LLM_BASE_URL
        ? builtinProvider()
        : openAiProvider({
            baseUrl: config.LLM_BASE_URL,
            apiKey: config.LLM_API_KEY,
            model: model.info.id,
            vision: model.info.vision,
          });
    made.set(modelId, provider);
    return provider;
  };
}
