// Thread: main
// uWS route patterns -> OpenAPI paths: `/messages/:sessionId` -> `/messages/{sessionId}`, a trailing `*` -> `{path}`.

export interface OpenApiPath {
  path: string;
  /** Path parameter names, in order. */
  params: string[];
  /** Name of the parameter standing for the wildcard, if any. */
  wildcard?: string;
}

export const WILDCARD_PARAM = 'path';

export function toOpenApiPath(pattern: string): OpenApiPath {
  const params: string[] = [];
  let wildcard: string | undefined;
  const segments = pattern.split('/').map((segment) => {
    if (segment.startsWith(':')) {
      params.push(segment.slice(1));
      return `{${segment.slice(1)}}`;
    }
    if (segment === '*') {
      wildcard = WILDCARD_PARAM;
      params.push(WILDCARD_PARAM);
      return `{${WILDCARD_PARAM}}`;
    }
    return segment;
  });
  return { path: segments.join('/') || '/', params, wildcard };
}

/** `POST /messages/:sessionId` -> `postMessagesBySessionId`; `GET /` -> `getRoot`. */
export function operationIdOf(method: string, pattern: string): string {
  const words = pattern
    .split('/')
    .filter(Boolean)
    .flatMap((segment) => {
      if (segment.startsWith(':')) return ['by', ...segment.slice(1).split(/[^a-zA-Z0-9]+/)];
      if (segment === '*') return ['any', 'path'];
      return segment.split(/[^a-zA-Z0-9]+/);
    })
    .filter(Boolean);
  const tail = words.length ? words.map((word) => word[0].toUpperCase() + word.slice(1)).join('') : 'Root';
  return method.toLowerCase() + tail;
}
