import { createHash } from 'node:crypto';
import type { OpenApiDocument } from '@hub/http';

type Json = unknown;

/**
 * zod writes a recursive schema (the JSON value of `dados`) with `$defs` and `$ref: "#/$defs/…"`
 * inside the schema. In an OpenAPI document such a pointer resolves against the document's root,
 * where there is no `$defs`, so tools (openapi-typescript, Swagger UI) cannot follow it. Each
 * `$defs` entry moves to `components.schemas` under a name made of its own and a hash of its
 * content (the same definition from several operations or services becomes one component), and the
 * pointers follow it.
 */
export function hoistSchemaDefs(document: OpenApiDocument & { webhooks?: unknown }): void {
  document.components.schemas ??= {};
  const schemas = document.components.schemas as Record<string, Json>;

  const visit = (node: Json, mapping: Map<string, string>): Json => {
    if (Array.isArray(node)) return node.map((item) => visit(item, mapping));
    if (!node || typeof node !== 'object') return node;
    const { $defs, ...rest } = node as Record<string, Json>;
    let local = mapping;
    if ($defs && typeof $defs === 'object' && !Array.isArray($defs)) {
      local = new Map(mapping);
      const hash = createHash('sha256').update(JSON.stringify($defs)).digest('hex').slice(0, 8);
      const names = Object.keys($defs).map((name) => [name, `${name.replace(/^_+/, '') || 'def'}_${hash}`] as const);
      for (const [name, component] of names) local.set(`#/$defs/${name}`, `#/components/schemas/${component}`);
      for (const [name, component] of names)
        if (!(component in schemas)) schemas[component] = visit(($defs as Record<string, Json>)[name], local);
    }
    const out: Record<string, Json> = {};
    for (const [key, value] of Object.entries(rest))
      out[key] = key === '$ref' && typeof value === 'string' ? (local.get(value) ?? value) : visit(value, local);
    return out;
  };

  document.paths = visit(document.paths, new Map()) as OpenApiDocument['paths'];
  if (document.webhooks) document.webhooks = visit(document.webhooks, new Map());
}
