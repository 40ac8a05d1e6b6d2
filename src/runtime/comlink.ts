// comlink ships no Node ESM entry in its package "main" (it is UMD), so import its ESM build directly.
// @ts-ignore -- the .mjs files have no .d.mts beside them; the types come from the UMD declaration below.
import * as esm from 'comlink/dist/esm/comlink.mjs';
import type * as ComlinkTypes from 'comlink';

export type Remote<T> = ComlinkTypes.Remote<T>;
export const Comlink = esm as typeof ComlinkTypes;
export { batchingEndpoint } from './batching-endpoint.js';
