/** Renders JSON Schemas (as found in the OpenAPI document) as small readable HTML trees. */

export type Schema = Record<string, unknown>;

export const escapeHtml = (text: unknown) =>
  String(text).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

const MAX_DEPTH = 8;

function refName(ref: string): string {
  return ref.split('/').pop() ?? ref;
}

function variants(schema: Schema): Schema[] | undefined {
  return (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
}

/** One line: "string (email, ≤ 160)", "integer ≥ 1", "Problema", "array of object", "string or null". */
export function typeLabel(schema: Schema | undefined): string {
  if (!schema || typeof schema !== 'object') return 'any';
  if (typeof schema.$ref === 'string') return refName(schema.$ref);
  const options = variants(schema);
  if (options) return options.map(typeLabel).join(' or ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' or ') : ((schema.type as string | undefined) ?? 'any');
  if (type === 'array') return `array of ${typeLabel(schema.items as Schema)}`;
  const notes: string[] = [];
  if (schema.format) notes.push(String(schema.format));
  if (schema.minLength !== undefined) notes.push(`≥ ${schema.minLength} chars`);
  if (schema.maxLength !== undefined) notes.push(`≤ ${schema.maxLength} chars`);
  // zod writes the safe-integer range on every integer, and a long pattern beside each uuid: noise.
  if (schema.minimum !== undefined && schema.minimum !== -Number.MAX_SAFE_INTEGER) notes.push(`≥ ${schema.minimum}`);
  if (schema.maximum !== undefined && schema.maximum !== Number.MAX_SAFE_INTEGER) notes.push(`≤ ${schema.maximum}`);
  if (schema.maxItems !== undefined) notes.push(`≤ ${schema.maxItems} items`);
  if (schema.pattern !== undefined && !schema.format) notes.push(`pattern ${schema.pattern}`);
  if (schema.default !== undefined) notes.push(`default ${JSON.stringify(schema.default)}`);
  return notes.length ? `${type} (${notes.join(', ')})` : type;
}

function objectOf(schema: Schema): Schema | undefined {
  if (schema.properties) return schema;
  if (schema.type === 'array' && schema.items && typeof schema.items === 'object')
    return objectOf(schema.items as Schema);
  for (const option of variants(schema) ?? []) {
    const found = objectOf(option);
    if (found) return found;
  }
  return undefined;
}

/** The properties of an object (or of the items of an array of objects) as a nested list. */
export function renderSchema(schema: Schema | undefined, options: { input?: boolean } = {}, depth = 0): string {
  if (!schema) return '';
  const object = objectOf(schema);
  if (!object || depth > MAX_DEPTH) return `<p class="type">${escapeHtml(typeLabel(schema))}</p>`;
  const required = new Set((object.required as string[] | undefined) ?? []);
  const rows = Object.entries(object.properties as Record<string, Schema>).map(([name, property]) => {
    const nested = objectOf(property) ? renderSchema(property, options, depth + 1) : '';
    const description = property.description ? ` <span class="desc">${escapeHtml(property.description)}</span>` : '';
    return (
      `<li><code>${escapeHtml(name)}</code>${required.has(name) ? '' : ' <span class="opt">optional</span>'}` +
      ` <span class="type">${escapeHtml(typeLabel(property))}</span>${description}${nested}</li>`
    );
  });
  // Output schemas are closed too, but saying so there would only confuse readers.
  const extra =
    options.input && object.additionalProperties === false ? '<li class="desc">no other fields accepted</li>' : '';
  const head = depth === 0 && schema !== object ? `<p class="type">${escapeHtml(typeLabel(schema))}</p>` : '';
  return `${head}<ul class="schema">${rows.join('')}${extra}</ul>`;
}
