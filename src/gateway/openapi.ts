// Thread: main
// OpenAPI 3.1 paths and component schemas of the gateway's routes, generated from the descriptors:
// path and query parameters from the request type, the 200 body from the response type as Cosmos REST
// renders it (declared names, every field present, 64-bit integers as strings, enums as names).
import { SECURITY_OF } from '../docs/security.js';
import { isRealOneof, isWrapper, resolveFieldPath } from './fields.js';
import { openApiPath } from './path-template.js';
import { protobuf } from './proto-root.js';
import type { GatewayRoute } from './route-table.js';

type Schema = Record<string, unknown>;

const ERROR_SCHEMA = 'gateway.CosmosError';
const QUERY_DEPTH = 4;

const WELL_KNOWN: Readonly<Record<string, Schema>> = {
  '.google.protobuf.Timestamp': { type: 'string', format: 'date-time', examples: ['2024-01-31T12:00:00Z'] },
  '.google.protobuf.Duration': { type: 'string', examples: ['1.500s'] },
  '.google.protobuf.Any': {
    type: 'object',
    properties: { '@type': { type: 'string' } },
    required: ['@type'],
    additionalProperties: true,
  },
  '.google.protobuf.Empty': { type: 'object' },
  '.google.protobuf.FieldMask': { type: 'string' },
  '.google.protobuf.Struct': { type: 'object', additionalProperties: true },
  '.google.protobuf.Value': {},
  '.google.protobuf.ListValue': { type: 'array', items: {} },
};

export function gatewayOpenApi(
  routes: readonly GatewayRoute[],
  prefix: string,
  auth: 'public' | 'api-key',
): { paths: Record<string, unknown>; schemas: Record<string, unknown> } {
  const schemas: Record<string, Schema> = {
    [ERROR_SCHEMA]: {
      type: 'object',
      properties: {
        code: { type: 'integer', description: 'gRPC status code' },
        message: { type: 'string' },
        details: { type: 'array', items: {} },
      },
      required: ['code', 'message', 'details'],
    },
  };
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = prefix + openApiPath(route.template);
    // First declared pattern wins, in the document as in routing.
    if (paths[path]?.get) continue;
    const { method, requestType, responseType, service } = route.method;
    const bound = new Set(route.template.variables.map((variable) => variable.name));
    paths[path] = {
      get: {
        operationId: `${service.fullName.slice(1).replaceAll('.', '_')}_${method.name}${route.legacy ? '_legacy' : ''}`,
        summary: method.comment ?? `${method.name} (${route.method.grpcPath})`,
        tags: [service.fullName.slice(1, service.fullName.lastIndexOf('.'))],
        ...(route.legacy ? { deprecated: true } : {}),
        security: SECURITY_OF[auth],
        parameters: [
          ...route.template.variables.map((variable) => ({
            name: variable.name,
            in: 'path',
            required: true,
            schema: fieldSchema(fieldAt(requestType, variable.fieldPath), schemas, false),
          })),
          ...queryParameters(requestType, bound, schemas),
        ],
        responses: {
          200: { description: 'OK', content: { 'application/json': { schema: { $ref: ref(responseType, schemas) } } } },
          default: {
            description: 'Error (gRPC status code and message)',
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${ERROR_SCHEMA}` } } },
          },
        },
      },
    };
  }
  return { paths, schemas };
}

/** The leaf field of a path variable (the route's RequestMapper has already checked that it exists). */
function fieldAt(type: protobuf.Type, path: readonly string[]): protobuf.Field {
  return resolveFieldPath(type, path)!.at(-1)!;
}

/** Query parameters: scalar (and repeated scalar) fields by dotted path, nested messages flattened. */
function queryParameters(
  type: protobuf.Type,
  bound: Set<string>,
  schemas: Record<string, Schema>,
  prefix = '',
  depth = 0,
): Schema[] {
  const parameters: Schema[] = [];
  for (const field of type.fieldsArray) {
    const name = prefix + field.name;
    if (bound.has(name) || field.map) continue;
    const resolved = field.resolve().resolvedType;
    if (resolved instanceof protobuf.Type && !(resolved.fullName in WELL_KNOWN) && !isWrapper(resolved)) {
      if (!field.repeated && depth < QUERY_DEPTH)
        parameters.push(...queryParameters(resolved, bound, schemas, `${name}.`, depth + 1));
      continue;
    }
    parameters.push({
      name,
      in: 'query',
      required: false,
      schema: fieldSchema(field, schemas, false),
      ...(field.repeated ? { explode: true } : {}),
    });
  }
  return parameters;
}

function ref(type: protobuf.Type, schemas: Record<string, Schema>): string {
  const name = type.fullName.slice(1);
  if (!schemas[name]) {
    schemas[name] = {}; // placeholder first: recursive types refer to themselves
    const properties: Record<string, Schema> = {};
    const required: string[] = [];
    for (const field of type.fieldsArray) {
      properties[field.name] = fieldSchema(field.resolve(), schemas, true);
      if (!isRealOneof(field.partOf)) required.push(field.name);
    }
    schemas[name] = { type: 'object', properties, required };
  }
  return `#/components/schemas/${name}`;
}

function fieldSchema(field: protobuf.Field, schemas: Record<string, Schema>, inBody: boolean): Schema {
  const one = valueSchema(field, schemas, inBody);
  if (field.map) return { type: 'object', additionalProperties: one };
  if (field.repeated)
    return { type: 'array', items: field.type === 'bytes' ? { type: 'string', format: 'byte' } : one };
  return one;
}

function valueSchema(field: protobuf.Field, schemas: Record<string, Schema>, inBody: boolean): Schema {
  const resolved = field.resolvedType;
  if (resolved instanceof protobuf.Enum) return { type: 'string', enum: Object.keys(resolved.values) };
  if (resolved instanceof protobuf.Type) {
    const known =
      WELL_KNOWN[resolved.fullName] ??
      (isWrapper(resolved) ? scalarSchema(resolved.fields.value.type, false) : undefined);
    const schema = known ?? { $ref: ref(resolved, schemas) };
    return inBody ? { anyOf: [schema, { type: 'null' }] } : schema;
  }
  return scalarSchema(field.type, inBody);
}

function scalarSchema(type: string, inBody: boolean): Schema {
  switch (type) {
    case 'int64':
    case 'sint64':
    case 'sfixed64':
      return { type: 'string', format: 'int64', pattern: '^-?\\d+$' };
    case 'uint64':
    case 'fixed64':
      return { type: 'string', format: 'uint64', pattern: '^\\d+$' };
    case 'int32':
    case 'sint32':
    case 'sfixed32':
      return { type: 'integer', format: 'int32' };
    case 'uint32':
    case 'fixed32':
      return { type: 'integer', format: 'int64', minimum: 0, maximum: 4294967295 };
    case 'float':
    case 'double':
      return { type: 'number', format: type };
    case 'bool':
      return { type: 'boolean' };
    case 'bytes':
      // Empty bytes render as null in answers.
      return inBody ? { type: ['string', 'null'], format: 'byte' } : { type: 'string', format: 'byte' };
    default:
      return { type: 'string' };
  }
}
