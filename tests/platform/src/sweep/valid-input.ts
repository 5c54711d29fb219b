import { randomUUID } from 'node:crypto';
import { type JsonSchema, nonNull, type Operation, resourceOf } from './operations';

/** Ids of resources the sweep created through the API, so requests reach past "not found". */
export interface Fixtures {
  /** Valid path ids per resource ("aplicativo" -> its id). */
  ids: Record<string, string>;
  /** Valid values of body fields and path parameters by name ("aplicativo_id", "tipo_de_evento_nome"). */
  fields: Record<string, unknown>;
  companyDomain: string;
}

let counter = 0;
/** Unique per request, so valid values never collide with names taken by earlier requests. */
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

/** Candidates tried in order against a field's pattern; the first that matches is used. */
const PATTERN_CANDIDATES = (suffix: string) => [`varredura_${suffix}`, `varredura.${suffix}`, `v${suffix}`, '1', 'a'];

function validString(schema: JsonSchema, name: string, fixtures: Fixtures): string {
  const suffix = unique();
  if (schema.enum) return String(schema.enum[0]);
  if (schema.format === 'uuid') return (fixtures.fields[name] as string | undefined) ?? randomUUID();
  if (name === 'email' || schema.format === 'email') return `varredura.${suffix}@${fixtures.companyDomain}`;
  if (name.startsWith('url') || schema.format === 'uri') return `http://127.0.0.1:9/varredura/${suffix}`;
  if (schema.format === 'date-time' || name === 'desde' || name === 'ate' || name.endsWith('_em'))
    return new Date().toISOString();
  const candidates = schema.pattern
    ? PATTERN_CANDIDATES(suffix).filter((c) => new RegExp(schema.pattern as string, 'u').test(c))
    : [`varredura ${suffix}`];
  const text = candidates[0] ?? `varredura${suffix}`;
  return schema.maxLength !== undefined ? text.slice(0, schema.maxLength) : text;
}

/**
 * A value the schema accepts, preferring what the sweep knows about the field by its name (the ids
 * of created resources, perfil "colaborador", e-mails of the company domain). Optional properties are
 * filled too, so that each of them is a target with the rest of the request valid.
 */
export function validValue(schema: JsonSchema, name: string, fixtures: Fixtures): unknown {
  if (name in fixtures.fields) return fixtures.fields[name];
  const s = nonNull(schema);
  if (s.const !== undefined) return s.const;
  if (s.enum) return s.enum.find((v) => v !== null);
  switch (s.type) {
    case 'string':
      return validString(s, name, fixtures);
    case 'integer':
    case 'number':
      return s.default ?? s.minimum ?? 1;
    case 'boolean':
      // true keeps switched-on things switched on (ativo, ativa).
      return true;
    case 'array':
      return s.items && (s.minItems ?? 0) > 0 ? [validValue(s.items, name, fixtures)] : [];
    case 'object':
      return Object.fromEntries(
        Object.entries(s.properties ?? {}).map(([key, property]) => [key, validValue(property, key, fixtures)]),
      );
    default:
      // An unconstrained value (esquema, dados): the smallest object.
      return name === 'esquema' ? { type: 'object' } : {};
  }
}

/** A valid path parameter: the id of the created resource of that path, or the named fixture. */
export function validPathValue(operation: Operation, name: string, fixtures: Fixtures): string {
  if (name === 'id') return fixtures.ids[resourceOf(operation.path)] ?? randomUUID();
  const known = fixtures.fields[name];
  return known === undefined ? randomUUID() : String(known);
}
