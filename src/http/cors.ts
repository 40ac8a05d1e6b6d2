// CORS as the oracle spec (rule 6) fixes it: CORS_ORIGIN `*` by default; specific origins enable credentials.
export const ALLOWED_HEADERS = [
  'Content-Type', 'Authorization', 'x-ucan-delegation', 'x-matrix-access-token', 'x-matrix-homeserver',
  'x-did', 'x-request-id', 'x-auth-type', 'x-timezone', 'x-api-key', 'x-cosmos-block-height', 'grpc-metadata-x-cosmos-block-height',
].join(', ');
export const ALLOWED_METHODS = 'GET, POST, PUT, DELETE, PATCH, OPTIONS';
export const EXPOSED_HEADERS = 'X-Request-Id, X-Cosmos-Block-Height, Grpc-Metadata-X-Cosmos-Block-Height';

export type CorsHeaders = (origin: string | undefined) => [string, string][];

/** CORS_ORIGIN as a list of origins, or `*` for any origin. */
export function corsOrigins(setting: string): string[] | '*' {
  const origins = setting.split(',').map((s) => s.trim()).filter(Boolean);
  return origins.length === 0 || origins.includes('*') ? '*' : origins;
}

export function createCors(setting: string): CorsHeaders {
  const origins = corsOrigins(setting);
  if (origins === '*') {
    const fixed: [string, string][] = [
      ['Access-Control-Allow-Origin', '*'],
      ['Access-Control-Expose-Headers', EXPOSED_HEADERS],
    ];
    return () => fixed;
  }
  const allowed = new Set(origins);
  return (origin) =>
    origin && allowed.has(origin)
      ? [
          ['Access-Control-Allow-Origin', origin],
          ['Access-Control-Allow-Credentials', 'true'],
          ['Access-Control-Expose-Headers', EXPOSED_HEADERS],
          ['Vary', 'Origin'],
        ]
      : [['Vary', 'Origin']];
}
