// Thread: any (shared; read once per thread at start)
// The models a user may pick (`GET /models`, `model` of a message): the built-in agent and models of the
// OpenAI-compatible server at LLM_BASE_URL, each with the label, tier and prices the client SDK's picker shows
// (its `ModelsResponse`). Configured as JSON in ORACLE_MODELS or in the file ORACLE_MODELS_FILE; without either,
// the one model the server runs: LLM_MODEL on LLM_BASE_URL, else the built-in agent.
import { readFileSync } from 'node:fs';
import * as v from 'valibot';

/** A model as `GET /models` lists it (the SDK's `ModelInfo`). */
export interface ModelInfo {
  id: string;
  label: string;
  family: string;
  tier: 'everyday' | 'balanced' | 'top';
  costLabel: string;
  badge: string;
  blurb: string;
  vision: boolean;
  pricing: { inputPerMillion: number; outputPerMillion: number; currency: 'USD'; unit: 'per_million_tokens' };
  isDefault: boolean;
}

/** Which agent answers for a model: the built-in one, or the OpenAI-compatible server (sent `id` as its model). */
export type ModelProvider = 'builtin' | 'llm';

export interface CatalogueModel {
  info: ModelInfo;
  provider: ModelProvider;
}

export interface ModelCatalogue {
  models: readonly CatalogueModel[];
  defaultId: string;
  /** The model of that id, or undefined when it is not offered. */
  find(id: string): CatalogueModel | undefined;
  /** `GET /models`: `{ models, default }`. */
  response(): { models: ModelInfo[]; default: string };
}

export const BUILTIN_MODEL_ID = 'builtin';

const text = (max: number) =>
  v.pipe(v.string('must be a string'), v.maxLength(max, `must be at most ${max} characters`));
const price = v.pipe(v.number('must be a number'), v.minValue(0, 'must be 0 or more'), v.finite('must be finite'));

const EntrySchema = v.strictObject({
  id: v.pipe(text(200), v.nonEmpty('should not be empty')),
  provider: v.optional(v.picklist(['builtin', 'llm'], 'must be "builtin" or "llm"')),
  label: v.optional(text(120)),
  family: v.optional(text(60)),
  tier: v.optional(v.picklist(['everyday', 'balanced', 'top'], 'must be everyday, balanced or top'), 'everyday'),
  costLabel: v.optional(text(20), '$'),
  badge: v.optional(text(40), ''),
  blurb: v.optional(text(500), ''),
  vision: v.optional(v.boolean('must be a boolean'), false),
  pricing: v.optional(v.strictObject({ inputPerMillion: price, outputPerMillion: price }), {
    inputPerMillion: 0,
    outputPerMillion: 0,
  }),
});

/** The catalogue, its bare-array form given as `{ models }` (so every issue keeps its path). */
const CatalogueSchema = v.strictObject(
  {
    models: v.pipe(v.array(EntrySchema, 'must be an array'), v.minLength(1, 'must list at least one model')),
    default: v.optional(text(200)),
  },
  'must be an array of models or { models, default }',
);

export interface ModelsConfig {
  readonly ORACLE_MODELS?: string;
  readonly ORACLE_MODELS_FILE?: string;
  readonly LLM_BASE_URL?: string;
  readonly LLM_MODEL?: string;
}

function source(config: ModelsConfig): { where: string; json: string } | undefined {
  if (config.ORACLE_MODELS) return { where: 'ORACLE_MODELS', json: config.ORACLE_MODELS };
  if (!config.ORACLE_MODELS_FILE) return undefined;
  try {
    return {
      where: `ORACLE_MODELS_FILE ${config.ORACLE_MODELS_FILE}`,
      json: readFileSync(config.ORACLE_MODELS_FILE, 'utf8'),
    };
  } catch (error) {
    throw new Error(`ORACLE_MODELS_FILE ${config.ORACLE_MODELS_FILE} cannot be read: ${(error as Error).message}`);
  }
}

function defaultEntries(config: ModelsConfig): v.InferInput<typeof EntrySchema>[] {
  if (config.LLM_BASE_URL) return [{ id: config.LLM_MODEL ?? 'gpt-4o-mini', provider: 'llm' }];
  return [
    {
      id: BUILTIN_MODEL_ID,
      provider: 'builtin',
      label: 'Built-in agent',
      badge: 'Fast',
      blurb: 'A deterministic agent that runs inside the oracle: no network, no cost.',
    },
  ];
}

/** The catalogue, or throws a message naming the setting and the problem (the server does not start). */
export function loadModelCatalogue(config: ModelsConfig): ModelCatalogue {
  const given = source(config);
  let input: unknown = defaultEntries(config);
  if (given) {
    try {
      input = JSON.parse(given.json);
    } catch (error) {
      throw new Error(`${given.where} is not JSON: ${(error as Error).message}`);
    }
  }
  const parsed = v.safeParse(CatalogueSchema, Array.isArray(input) ? { models: input } : input);
  if (!parsed.success) {
    const issues = parsed.issues.map((issue) => `${v.getDotPath(issue) ?? '(catalogue)'} ${issue.message}`);
    throw new Error(`${given?.where ?? 'the model catalogue'}: ${issues.join('; ')}`);
  }
  const entries = parsed.output.models;
  const defaultId = parsed.output.default ?? entries[0].id;
  const models = entries.map((entry): CatalogueModel => {
    const provider = entry.provider ?? 'llm';
    if (provider === 'llm' && !config.LLM_BASE_URL)
      throw new Error(`${given?.where}: model ${entry.id} runs on the LLM server, but LLM_BASE_URL is not set`);
    const family =
      entry.family ??
      (entry.id.includes('/') ? entry.id.split('/')[0] : provider === 'builtin' ? 'builtin' : 'openai-compatible');
    const { id, tier, costLabel, badge, blurb, vision, pricing } = entry;
    const info: ModelInfo = {
      id,
      label: entry.label ?? id,
      family,
      tier,
      costLabel,
      badge,
      blurb,
      vision,
      pricing: { ...pricing, currency: 'USD', unit: 'per_million_tokens' },
      isDefault: id === defaultId,
    };
    return { info, provider };
  });
  const byId = new Map(models.map((model) => [model.info.id, model]));
  if (byId.size !== models.length) throw new Error(`${given?.where}: two models share an id`);
  if (!byId.has(defaultId)) throw new Error(`${given?.where}: the default ${defaultId} is not one of the models`);
  const response = JSON.stringify({ models: models.map((model) => model.info), default: defaultId });
  return { models, defaultId, find: (id) => byId.get(id), response: () => JSON.parse(response) };
}
