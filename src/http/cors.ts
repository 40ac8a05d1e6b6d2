// Thread: main
// CORS as the oracle spec (rule 6) fixes it: CORS_ORIGIN `*` by default; specific origins enable credentials.
export const ALLOWED_HEADERS = [
  'Content-Type',
  'Authorization',
  'x-ucan-delegation',
  'x-matrix-access-token',
  'x-matrix-homeserver',
  'x-did',
  'x-request-id',
  'x-auth-type',
  'x-timezone',
  'x-api-key',
  'x-cosmos-block-height',
  'grpc-metadata-x-cosmos-block-height',
].join(', ');
export const ALLOWED_METHODS = 'GET, POST, PUT, DELETE, PATCH, OPTIONS';
export const EXPOSED_HEADERS = 'X-Request-Id, X-Run-Id, X-Cosmos-Block-Height, Grpc-Metadata-X-Cosmos-Block-Height';

/** The CORS headers of an answer, built once per origin: as pairs, and as the lines uWS writes (see `block`). */
export type CorsHeaders = (origin: string | undefined) => CorsPairs;

/**
 * Header pairs with `block`: the same headers as the text after a header's value, each `\r\n<name>: <value>`, so
 * the front door writes them together with the answer's own in one native call (uWS writes `name: value\r\n`
 * verbatim).
 */
export type CorsPairs = [string, string][] & { readonly block: string };

/** CORS_ORIGIN as a list of origins, or `*` for any origin. */
export function corsOrigins(setting: string): string[] | '*' {
  const origins = setting
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return origins.length === 0 || origins.includes('*') ? '*' : origins;
}

function pairs(list: [string, string][]): CorsPairs {
  return Object.assign(list, { block: list.map(([name, value]) => `\r\n${name}: ${value}`).join('') });
}

export function createCors(setting: string): CorsHeaders {
  const origins = corsOrigins(setting);
  if (origins === '*') {
    const fixed = pairs([
      ['Access-Control-Allow-Origin', '*'],
      ['Access-Control-Expose-Headers', EXPOSED_HEADERS],
    ]);
    return () => fixed;
  }
  const allowed = new Map(
    origins.map((origin) => [
      origin,
      pairs([
        ['Access-Control-Allow-Origin', origin],
        ['Access-Control-Allow-Credentials', 'true'],
        ['Access-Control-Expose-Headers', EXPOSED_HEADERS],
        ['Vary', 'Origin'],
      ]),
    ]),
  );
  const others = pairs([['Vary', 'Origin']]);
  return (origin) => (origin && allowed.get(origin)) || others;
}
