import { z } from 'zod';
import { operationIdOf } from './operation-id';
import type { RouteSpec, SecurityScheme } from './route';

export const CONTRACT_VERSION = '0.1.16';

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string; license?: { name: string; identifier?: string } };
  servers?: { url: string; description?: string }[];
  paths: Record<string, Record<string, unknown>>;
  components: Record<string, Record<string, unknown>>;
  tags?: { name: string; description?: string }[];
  security?: Record<string, string[]>[];
}

const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'codigo'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    codigo: { type: 'string', description: 'stable snake_case code' },
    erros: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        required: ['caminho', 'mensagem'],
        properties: { caminho: { type: 'string' }, mensagem: { type: 'string' } },
      },
    },
    erro_id: { type: 'string', description: 'present on 5xx: quote it to the operators' },
  },
};

const REFUSALS: Record<number, string> = {
  400: 'malformed JSON, query or path (percent-encoding that does not decode to UTF-8, or NUL)',
  401: 'missing or invalid token',
  403: 'inactive access or missing permission',
  404: 'not found',
  422: 'the input breaks a rule (text with NUL or lone surrogates, non-finite numbers, nesting past 256 included)',
};

const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problema' } } },
});

function jsonSchema(schema: z.ZodType, io: 'input' | 'output') {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<
    string,
    unknown
  >;
  return rest;
}

function parametersOf(schema: z.ZodType | undefined, where: 'path' | 'query' | 'header') {
  if (!schema) return [];
  const json = jsonSchema(schema, 'input') as { properties?: Record<string, object>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, property]) => {
    const { description } = property as { description?: string };
    return {
      name,
      in: where,
      required: where === 'path' || (json.required ?? []).includes(name),
      ...(description ? { description } : {}),
      schema: property,
    };
  });
}

/**
 * `bearer`, the default of every operation: a panel user's token (`typ: "usuario"`). `aplicativo`: an
 * application's token (`typ: "aplicativo"`), for the routes that say so (`security` of their spec).
 * Both are sent the same way; a route refuses the other kind with 401 `tipo_de_token_invalido`.
 */
const SECURITY_SCHEMES: Record<SecurityScheme, object> = {
  bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
  aplicativo: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'the token of a registered, active application (typ "aplicativo", its client_id in sub), issued by the identity service',
  },
};

/** Builds an OpenAPI 3.1 document from the specs of the routes; the zod schemas are the source. */
export function buildOpenApi(
  title: string,
  specs: RouteSpec[],
  servers: OpenApiDocument['servers'] = [],
): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  const named = new Map<string, string>();
  for (const spec of specs) {
    const path = spec.path.replace(/:(\w+)/g, '{$1}');
    const operationId = spec.operationId ?? operationIdOf(spec.method, spec.path);
    const other = named.get(operationId);
    if (other)
      throw new Error(
        `${spec.method.toUpperCase()} ${path} and ${other} are both ${operationId}: name one (operationId)`,
      );
    named.set(operationId, `${spec.method.toUpperCase()} ${path}`);
    const status = spec.status ?? (spec.response ? 200 : 204);
    const responses: Record<string, unknown> = {
      [status]: spec.response
        ? { description: 'success', content: { 'application/json': { schema: jsonSchema(spec.response, 'output') } } }
        : { description: 'success, empty body' },
    };
    const refusals = { ...REFUSALS, ...spec.refusals };
    for (const [code, description] of Object.entries(refusals)) {
      if (spec.authenticated === false && (code === '401' || code === '403')) continue;
      responses[code] = problemResponse(description);
    }
    paths[path] ??= {};
    paths[path][spec.method] = {
      operationId,
      summary: spec.summary,
      tags: [spec.tag],
      ...(spec.permission ? { description: `Requires: ${spec.permission}` } : {}),
      parameters: [
        ...parametersOf(spec.params, 'path'),
        ...parametersOf(spec.query, 'query'),
        ...parametersOf(spec.headers, 'header'),
      ],
      ...(spec.body
        ? {
            requestBody: {
              required: true,
              content: { 'application/json': { schema: jsonSchema(spec.body, 'input') } },
            },
          }
        : {}),
      responses,
      ...(spec.authenticated === false
        ? { security: [] }
        : spec.security
          ? { security: spec.security.map((scheme) => ({ [scheme]: [] })) }
          : {}),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title, version: CONTRACT_VERSION },
    servers,
    paths,
    components: {
      schemas: { Problema: problemSchema },
      securitySchemes: securitySchemesOf(paths),
    },
    security: [{ bearer: [] }],
  };
}

/** `bearer` (every document's default) and the other schemes the operations name: none declared unused. */
function securitySchemesOf(paths: OpenApiDocument['paths']): Record<string, object> {
  const used = new Set<string>(['bearer']);
  for (const operations of Object.values(paths))
    for (const operation of Object.values(operations))
      for (const requirement of (operation as { security?: Record<string, string[]>[] }).security ?? [])
        for (const scheme of Object.keys(requirement)) used.add(scheme);
  return Object.fromEntries(Object.entries(SECURITY_SCHEMES).filter(([scheme]) => used.has(scheme)));
}

/** Merges the documents of several services into one (the gateway's /openapi.json). */
export function mergeOpenApi(
  title: string,
  documents: OpenApiDocument[],
  servers: OpenApiDocument['servers'],
): OpenApiDocument {
  const merged = buildOpenApi(title, [], servers);
  for (const document of documents) {
    for (const [path, operations] of Object.entries(document.paths)) {
      merged.paths[path] = { ...merged.paths[path], ...operations };
    }
  }
  merged.components.securitySchemes = securitySchemesOf(merged.paths);
  merged.tags = [
    ...new Set(
      Object.values(merged.paths).flatMap((ops) =>
        Object.values(ops).flatMap((op) => (op as { tags?: string[] }).tags ?? []),
      ),
    ),
  ]
    .sort()
    .map((name) => ({ name }));
  return merged;
}
