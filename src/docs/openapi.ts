// Thread: main
// The OpenAPI 3.1 document of every route of the server: the Router's routes with their docs, plus what faces
// describe themselves through `openApi()` (the protocol gateway's descriptor-driven routes).
import type { Face } from '../app/face.js';
import type { Route } from '../http/router.js';
import { SchemaConverter, type JsonObject } from './json-schema.js';
import { operationIdOf, toOpenApiPath } from './paths.js';
import { readApiDocs, type ApiDocs, type ResponseDoc } from './route-docs.js';
import { HttpErrorBodySchema } from './schemas.js';
import { SECURITY_OF, SECURITY_SCHEMES } from './security.js';
import type { RouteAuth } from '../http/route.js';

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

export interface DocumentSources {
  routes: readonly Route[];
  faces?: readonly Pick<Face, 'name' | 'openApi'>[];
  info: OpenApiInfo;
}

export interface OpenApiDocument {
  openapi: string;
  info: OpenApiInfo;
  paths: Record<string, JsonObject>;
  components: { schemas: JsonObject; securitySchemes: JsonObject };
}

export function buildOpenApiDocument({ routes, faces = [], info }: DocumentSources): OpenApiDocument {
  const schemas: JsonObject = {};
  const paths: Record<string, JsonObject> = {};
  const facePaths: [string, JsonObject][] = [];
  // Face schemas first, so the names generated for route schemas never shadow them.
  for (const face of faces) {
    const described = face.openApi?.();
    if (!described) continue;
    Object.assign(schemas, described.schemas);
    for (const [path, item] of Object.entries(described.paths)) facePaths.push([path, item as JsonObject]);
  }

  const converter = new SchemaConverter(schemas);
  const operationIds = new Set<string>();
  for (const route of routes) {
    const docs = readApiDocs(route);
    if (docs.hidden) continue;
    const { path } = toOpenApiPath(route.pattern);
    let operationId = operationIdOf(route.method, route.pattern);
    for (let n = 2; operationIds.has(operationId); n++)
      operationId = `${operationIdOf(route.method, route.pattern)}${n}`;
    operationIds.add(operationId);
    (paths[path] ??= {})[route.method.toLowerCase()] = describeOperation(route, docs, operationId, converter);
  }
  // A face knows its own routes best: its operation wins over a generic one on the same path and method.
  for (const [path, item] of facePaths) paths[path] = { ...paths[path], ...item };

  return {
    openapi: '3.1.0',
    info,
    paths,
    components: { schemas, securitySchemes: SECURITY_SCHEMES },
  };
}

function describeOperation(route: Route, docs: ApiDocs, operationId: string, converter: SchemaConverter): JsonObject {
  const operation: JsonObject = { operationId };
  if (docs.summary) operation.summary = docs.summary;
  if (docs.description) operation.description = docs.description;
  if (docs.tags?.length) operation.tags = docs.tags;

  const parameters = [...pathParameters(route, docs, converter), ...queryParameters(docs, converter)];
  if (parameters.length) operation.parameters = parameters;

  if (docs.body) {
    const schema = converter.convert(docs.body, 'input');
    const types = docs.bodyContentTypes ?? ['application/json'];
    operation.requestBody = { required: true, content: Object.fromEntries(types.map((type) => [type, { schema }])) };
  }

  const responses: JsonObject = {};
  for (const [status, answer] of Object.entries(docs.responses ?? {}))
    responses[status] = describeResponse(answer, converter);
  const auth = authOf(docs);
  operation.security = SECURITY_OF[auth];
  if (auth === 'ucan') {
    responses['401'] ??= describeResponse(
      { description: 'Missing or invalid UCAN (invocation or delegation).', schema: HttpErrorBodySchema },
      converter,
    );
  }
  if (Object.keys(responses).length) operation.responses = responses;
  return operation;
}

/** A declared route says who may call it; an undeclared one is UCAN-protected unless flagged public or operator. */
export function authOf(docs: ApiDocs): RouteAuth {
  return docs.auth ?? (docs.public ? 'public' : docs.operator ? 'operator' : 'ucan');
}

function pathParameters(route: Route, docs: ApiDocs, converter: SchemaConverter): JsonObject[] {
  const { params, wildcard } = toOpenApiPath(route.pattern);
  const described = docs.params ? objectProperties(converter.convert(docs.params, 'input')) : undefined;
  return params.map((name) => ({
    name,
    in: 'path',
    required: true,
    ...(name === wildcard ? { description: 'The rest of the path.' } : {}),
    schema: described?.properties[name] ?? { type: 'string' },
  }));
}

function queryParameters(docs: ApiDocs, converter: SchemaConverter): JsonObject[] {
  if (!docs.query) return [];
  const { properties, required } = objectProperties(converter.convert(docs.query, 'input'));
  return Object.entries(properties).map(([name, schema]) => {
    const parameter: JsonObject = { name, in: 'query', required: required.has(name), schema };
    if (typeof schema.description === 'string') parameter.description = schema.description;
    return parameter;
  });
}

function objectProperties(json: JsonObject): { properties: Record<string, JsonObject>; required: Set<string> } {
  const properties = (json.properties ?? {}) as Record<string, JsonObject>;
  const required = new Set(Array.isArray(json.required) ? (json.required as string[]) : []);
  return { properties, required };
}

function describeResponse(answer: ResponseDoc, converter: SchemaConverter): JsonObject {
  if (!answer.schema && !answer.contentType) return { description: answer.description };
  const schema = answer.schema ? converter.convert(answer.schema, 'output') : {};
  return { description: answer.description, content: { [answer.contentType ?? 'application/json']: { schema } } };
}
