/** What the sweep needs of an OpenAPI 3.1 document: its operations, their parameters and bodies. */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  additionalProperties?: boolean | JsonSchema;
}

export interface Parameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** OpenAPI form: /assinatura/{id} */
  path: string;
  /** "POST /assinatura" */
  key: string;
  parameters: Parameter[];
  body?: JsonSchema;
  /** False for routes documented with `security: []`. */
  authenticated: boolean;
  mutating: boolean;
}

interface DocumentOperation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  security?: unknown[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, DocumentOperation>>;
}

const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

export function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.entries(operations)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        key: `${method.toUpperCase()} ${path}`,
        parameters: (operation.parameters ?? []).filter((p) => p.in === 'path' || p.in === 'query'),
        body: operation.requestBody?.content?.['application/json']?.schema,
        authenticated: !(Array.isArray(operation.security) && operation.security.length === 0),
        mutating: method !== 'get',
      })),
  );
}

/** The first segment of a path: the resource ("/versao-de-esquema/{id}/validar" -> "versao-de-esquema"). */
export const resourceOf = (path: string) => path.split('/')[1] ?? '';

/** The schema without null: the branch of an anyOf/oneOf or the type list a valid value is built from. */
export function nonNull(schema: JsonSchema): JsonSchema {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return nonNull(branches.find((b) => b.type !== 'null') ?? branches[0] ?? {});
  if (Array.isArray(schema.type)) return { ...schema, type: schema.type.find((t) => t !== 'null') };
  return schema;
}

/** The JSON types a schema accepts ("any" when it says nothing). */
export function typesOf(schema: JsonSchema): string[] {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return [...new Set(branches.flatMap(typesOf))];
  if (Array.isArray(schema.type)) return schema.type;
  if (schema.type) return [schema.type];
  if (schema.enum) return [...new Set(schema.enum.map((v) => (v === null ? 'null' : typeof v)))];
  return ['any'];
}

/** Dotted paths of every property of a body schema, nested objects included ("permissoes.aplicativos.ler"). */
export function fieldPaths(schema: JsonSchema, prefix: string[] = []): string[][] {
  const object = nonNull(schema);
  if (!object.properties) return [];
  return Object.entries(object.properties).flatMap(([name, property]) => [
    [...prefix, name],
    ...fieldPaths(property, [...prefix, name]),
  ]);
}
