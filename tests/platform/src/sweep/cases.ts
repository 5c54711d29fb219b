import { createHash } from 'node:crypto';
import type { RawRequest } from '../http-client';
import {
  type Hostile,
  hostileBodyKinds,
  hostileJsonKinds,
  hostilePathKinds,
  hostileQueryKinds,
  type RawJson,
  sampleKinds,
  toJsonBytes,
  wrongTypeFor,
} from './hostile-values';
import { fieldPaths, type JsonSchema, nonNull, type Operation, typesOf } from './operations';
import { type Fixtures, validPathValue, validValue } from './valid-input';

/** How long a hostile request may wait for its answer before it counts as none. */
const REQUEST_TIMEOUT_MS = 10_000;

export interface CaseContext {
  fixtures: Fixtures;
  /** The bearer token of an operation (none for public ones). */
  tokenFor(operation: Operation): string | undefined;
  seed: number;
  /** Samples of every kind per target (each run a new sample). */
  runs: number;
}

export interface Case {
  target: string;
  kind: string;
  input: string;
  request: RawRequest;
  seed: number;
}

/** A stable number from the operation and target, so a new route does not change the others' samples. */
const seedOf = (base: number, ...parts: string[]) =>
  (base + createHash('sha256').update(parts.join(' ')).digest().readUInt32BE(0)) % 2 ** 31;

const preview = (text: string) => (text.length > 60 ? `${text.slice(0, 60)}… (${text.length} chars)` : text);
/** Control characters and bytes that are not UTF-8 made visible, so the report stays readable. */
const previewBytes = (raw: RawJson) =>
  preview(
    [...raw.bytes.toString('utf8')]
      .map((c) => (c === '\ufffd' ? '<bad byte>' : c.charCodeAt(0) < 0x20 ? `<${c.charCodeAt(0)}>` : c))
      .join(''),
  );

function schemaAt(schema: JsonSchema, path: string[]): JsonSchema {
  return path.reduce<JsonSchema>((s, name) => nonNull(s).properties?.[name] ?? {}, schema);
}

function withValueAt(body: unknown, path: string[], value: RawJson): unknown {
  const copy = structuredClone(body) as Record<string, unknown>;
  let node = copy;
  for (const name of path.slice(0, -1)) {
    if (typeof node[name] !== 'object' || node[name] === null) node[name] = {};
    node = node[name] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
  return copy;
}

/** Every hostile case of one operation: each kind on each query parameter, path parameter, body field and the body. */
export function casesOf(operation: Operation, context: CaseContext): Case[] {
  const { fixtures } = context;
  const pathParams = operation.parameters.filter((p) => p.in === 'path');
  const pathWith = (name?: string, raw?: string) =>
    operation.path.replace(/\{([^}]+)\}/g, (_m, param: string) =>
      param === name ? (raw as string) : encodeURIComponent(validPathValue(operation, param, fixtures)),
    );
  // A fresh valid body per case: unique names, so an accepted case is not hidden by a 409 of an earlier one.
  const validBody = () => (operation.body ? validValue(operation.body, '', fixtures) : undefined);
  const validBodyBytes = () => {
    const body = validBody();
    return body === undefined ? undefined : toJsonBytes(body);
  };
  const request = (path: string, body?: Buffer): RawRequest => {
    const token = context.tokenFor(operation);
    return {
      method: operation.method,
      path,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body ? { 'content-type': 'application/json' } : {}),
      },
      body,
      timeoutMs: REQUEST_TIMEOUT_MS,
    };
  };
  const cases: Case[] = [];

  for (let run = 0; run < context.runs; run++) {
    const seedFor = (target: string) => seedOf(context.seed + run * 7919, operation.key, target);
    for (const param of operation.parameters.filter((p) => p.in === 'query')) {
      const target = `query ${param.name}`;
      const seed = seedFor(target);
      const valid = String(validValue(param.schema, param.name, fixtures));
      for (const { kind, value } of sampleKinds(hostileQueryKinds(param.name, valid), seed)) {
        const pairs = [...(value.value === undefined ? [] : [`${param.name}=${value.value}`]), ...(value.extra ?? [])];
        const query = pairs.join('&');
        cases.push({
          target,
          kind,
          input: preview(query),
          request: request(`${pathWith()}?${query}`, validBodyBytes()),
          seed,
        });
      }
    }
    for (const param of pathParams) {
      const target = `path ${param.name}`;
      const seed = seedFor(target);
      const valid = validPathValue(operation, param.name, fixtures);
      for (const { kind, value } of sampleKinds(hostilePathKinds(valid), seed) as Hostile<string>[]) {
        cases.push({
          target,
          kind,
          input: preview(value),
          request: request(pathWith(param.name, value), validBodyBytes()),
          seed,
        });
      }
    }
    if (operation.body) {
      for (const field of fieldPaths(operation.body)) {
        const target = `body ${field.join('.')}`;
        const seed = seedFor(target);
        const body = validBody();
        const valid = field.reduce<unknown>((v, name) => (v as Record<string, unknown> | undefined)?.[name], body);
        const kinds = hostileJsonKinds(wrongTypeFor(typesOf(schemaAt(operation.body, field))), valid);
        for (const { kind, value } of sampleKinds(kinds, seed)) {
          cases.push({
            target,
            kind,
            input: previewBytes(value),
            request: request(pathWith(), toJsonBytes(withValueAt(validBody(), field, value))),
            seed,
          });
        }
      }
      const seed = seedFor('body');
      for (const { kind, value } of sampleKinds(hostileBodyKinds(validBody()), seed)) {
        cases.push({
          target: 'body',
          kind,
          input: previewBytes(value),
          request: request(pathWith(), value.bytes),
          seed,
        });
      }
    }
  }
  return cases;
}
