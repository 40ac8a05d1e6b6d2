// comlink ships no Node ESM entry in its package "main" (it is UMD), so import its ESM build directly.
// @ts-ignore -- the .mjs files have no .d.mts beside them; the types come from the UMD declaration below.
import * as esm from 'comlink/dist/esm/comlink.mjs';
import type * as ComlinkTypes from 'comlink';
import { DomainError } from './errors.js';

export type Remote<T> = ComlinkTypes.Remote<T>;
export const Comlink = esm as typeof ComlinkTypes;
export { batchingEndpoint } from './batching-endpoint.js';

// comlink sends a thrown Error as { message, name, stack } only; a DomainError also keeps its code and
// details, so the main thread can rebuild it (both threads load this module, so both use this handler).
const builtInThrow = Comlink.transferHandlers.get('throw')!;
Comlink.transferHandlers.set('throw', {
  canHandle: builtInThrow.canHandle,
  serialize(thrown) {
    const { value } = thrown as { value: unknown };
    if (!(value instanceof DomainError)) return builtInThrow.serialize(thrown);
    const wire = { isError: true, value: { name: value.name, message: value.message, code: value.code, details: value.details } };
    return [wire, []];
  },
  deserialize(wire) {
    const { isError, value } = wire as { isError: boolean; value: { name?: string; code?: string; message?: string; details?: Record<string, unknown> } };
    if (isError && value.name === 'DomainError' && value.code) throw new DomainError(value.code, value.message ?? '', value.details);
    return builtInThrow.deserialize(wire);
  },
});
