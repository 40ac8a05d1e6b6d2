// Thread: main
// Answer schemas shared by the route docs of several faces.
import * as v from 'valibot';

/** The NestJS-shaped error body of src/http/errors.ts. */
export const HttpErrorBodySchema = v.pipe(
  v.object({
    statusCode: v.pipe(v.number(), v.integer()),
    message: v.union([v.string(), v.array(v.string())]),
    error: v.string(),
  }),
  v.examples([{ statusCode: 429, message: 'Too many requests, please try again later.', error: 'Too Many Requests' }]),
);

export const TOO_MANY_REQUESTS = {
  description:
    'Rate limit (RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_SECONDS and client address) exceeded; see Retry-After.',
  schema: HttpErrorBodySchema,
};
