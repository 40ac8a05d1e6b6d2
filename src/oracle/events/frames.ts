// Thread: main
// Client frames: the native socket's envelope `{ "event": "<name>", "data": { ... } }` and the payload of
// each client event that carries one. Anything else gets an `error` event naming the problem.
import * as v from 'valibot';
import { HttpError } from '../../http/errors.js';
import { validate } from '../errors.js';

const id = (max: number) =>
  v.pipe(
    v.string('must be a string'),
    v.nonEmpty('should not be empty'),
    v.maxLength(max, `must be at most ${max} characters`),
  );
const errorText = v.nullish(
  v.pipe(v.string('must be a string'), v.maxLength(10_000, 'must be at most 10000 characters')),
);

const EnvelopeSchema = v.object(
  {
    event: v.pipe(
      v.string('must be a string'),
      v.nonEmpty('should not be empty'),
      v.maxLength(64, 'must be at most 64 characters'),
    ),
    data: v.optional(v.unknown()),
  },
  'a frame must be a JSON object {"event": "<name>", "data": {...}}',
);

export const SubscribeSchema = v.nullish(v.object({ sessionId: v.optional(id(128)) }, 'data must be an object'));

export const ToolResultSchema = v.object(
  { toolCallId: id(256), result: v.optional(v.unknown()), error: errorText, sessionId: v.optional(id(128)) },
  'data must be an object',
);

export const ActionResultSchema = ToolResultSchema;

/** The problem of a frame, as the text of an `error` event. */
export class FrameError extends Error {
  constructor(
    message: string,
    readonly event?: string,
  ) {
    super(message);
    this.name = 'FrameError';
  }
}

function check<S extends v.GenericSchema>(schema: S, value: unknown, prefix: string, event?: string): v.InferOutput<S> {
  try {
    return validate(schema, value);
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    const message = (error.body as { message: string | string[] }).message;
    throw new FrameError(`${prefix}: ${Array.isArray(message) ? message.join('; ') : message}`, event);
  }
}

/** Validates the payload of a client event; a failure is a FrameError listing the issues. */
export function parseData<S extends v.GenericSchema>(schema: S, data: unknown, event: string): v.InferOutput<S> {
  return check(schema, data, `Invalid ${event}`, event);
}

/** Reads a native text frame (undefined = a binary frame) into its event name and payload. */
export function parseEnvelope(text: string | undefined): v.InferOutput<typeof EnvelopeSchema> {
  if (text === undefined) throw new FrameError('Frames must be JSON text: {"event": "<name>", "data": {...}}');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new FrameError(`Malformed frame: not JSON (${(error as Error).message})`);
  }
  return check(EnvelopeSchema, value, 'Malformed frame');
}
