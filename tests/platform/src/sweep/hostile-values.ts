import fc from 'fast-check';

/**
 * Hostile inputs as fast-check arbitraries, one per kind, so that every target gets every kind and
 * the seed decides the details (where the NUL sits, which surrogate, how deep, which wrong type).
 */

/** JSON text written as is into a body: it can say what JSON.stringify cannot (1e309, -0, __proto__ keys, bad bytes). */
export class RawJson {
  constructor(readonly bytes: Buffer) {}
  static text(text: string) {
    return new RawJson(Buffer.from(text, 'utf8'));
  }
}

/** Serialises a value in which some parts are RawJson, keeping those parts byte for byte. */
export function toJsonBytes(value: unknown): Buffer {
  if (value instanceof RawJson) return value.bytes;
  if (Array.isArray(value)) return join('[', value.map(toJsonBytes), ']');
  if (value !== null && typeof value === 'object')
    return join(
      '{',
      Object.entries(value).map(([k, v]) => Buffer.concat([Buffer.from(`${JSON.stringify(k)}:`), toJsonBytes(v)])),
      '}',
    );
  return Buffer.from(JSON.stringify(value) ?? 'null');
}

const join = (open: string, parts: Buffer[], close: string) =>
  Buffer.concat([
    Buffer.from(open),
    ...parts.flatMap((p, i) => (i === 0 ? [p] : [Buffer.from(','), p])),
    Buffer.from(close),
  ]);

/** A case: the kind (for grouping failures) and the value. */
export interface Hostile<T> {
  kind: string;
  value: T;
}

const around = fc.string({ maxLength: 6, unit: 'grapheme-ascii' });
/**
 * The two halves of a valid value cut at a place the seed picks (so the hostile part sits inside a
 * value that passes every other rule and reaches the database), or two short random strings.
 */
const halves = (valid: unknown): fc.Arbitrary<[string, string]> =>
  typeof valid === 'string' && valid.length > 0
    ? fc.nat(valid.length).map((i) => [valid.slice(0, i), valid.slice(i)])
    : fc.tuple(around, around);
/** Deep enough to overflow any recursive walk of the value. */
const depth = fc.integer({ min: 10_000, max: 12_000 });
/** Strings in URLs stay under Node's 16 KB header limit, so they reach the service (oversized URLs are their own test). */
const URL_LONG = 8_000;

const surrogate = fc.integer({ min: 0xd800, max: 0xdfff });
const hex4 = (n: number) => n.toString(16).padStart(4, '0');
/** A surrogate as a URL can carry it: its three UTF-8-shaped bytes, which are not UTF-8. */
const percentSurrogate = (s: number) =>
  [(s >> 12) | 0xe0, ((s >> 6) & 0x3f) | 0x80, (s & 0x3f) | 0x80]
    .map((b) => `%${b.toString(16).toUpperCase()}`)
    .join('');

/** Values of one body field (or of the whole body), as raw JSON. */
export function hostileJsonKinds(
  wrongType: fc.Arbitrary<unknown>,
  valid?: unknown,
): Record<string, fc.Arbitrary<RawJson>> {
  return {
    nul: halves(valid).map(([a, b]) => RawJson.text(JSON.stringify(`${a}\u0000${b}`))),
    lone_surrogate: fc
      .tuple(halves(valid), surrogate)
      .map(([[a, b], s]) =>
        RawJson.text(`${JSON.stringify(a).slice(0, -1)}\\u${hex4(s)}${JSON.stringify(b).slice(1)}`),
      ),
    invalid_utf8_bytes: fc
      .tuple(halves(valid), fc.constantFrom([0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]))
      .map(
        ([[a, b], bytes]) =>
          new RawJson(
            Buffer.concat([
              Buffer.from(JSON.stringify(a).slice(0, -1)),
              Buffer.from(bytes),
              Buffer.from(JSON.stringify(b).slice(1)),
            ]),
          ),
      ),
    string_200k: fc
      .constantFrom('a', 'é', '𝄞', ' ', '\u200b')
      .map((c) => RawJson.text(JSON.stringify(c.repeat(Math.ceil(200_000 / c.length))))),
    wrong_type: wrongType.map((v) => RawJson.text(JSON.stringify(v))),
    deep_array: depth.map((n) => RawJson.text('['.repeat(n) + ']'.repeat(n))),
    deep_object: depth.map((n) => RawJson.text('{"a":'.repeat(n) + '1' + '}'.repeat(n))),
    proto_key: fc
      .constantFrom('{"__proto__":{"master":true,"admin":true}}', '{"__proto__":null}', '{"a":1,"__proto__":[1]}')
      .map(RawJson.text),
    constructor_key: fc
      .constantFrom('{"constructor":{"prototype":{"master":true}}}', '{"constructor":"x","toString":1}')
      .map(RawJson.text),
    big_number: fc
      .constantFrom(
        '1e309',
        '-1e309',
        '9007199254740993',
        '2147483648',
        '-2147483649',
        '1e400',
        '123456789012345678901234567890',
      )
      .map(RawJson.text),
    odd_number: fc.constantFrom('-0', '-0.0', '0.1e-400', '1.5', '-1', '0').map(RawJson.text),
  };
}

/** A value of another JSON type than the schema's types. */
export function wrongTypeFor(types: string[]): fc.Arbitrary<unknown> {
  const all: Record<string, fc.Arbitrary<unknown>> = {
    string: fc.string({ maxLength: 5 }),
    integer: fc.integer(),
    number: fc.double({ noNaN: true, noDefaultInfinity: true }),
    boolean: fc.boolean(),
    null: fc.constant(null),
    array: fc.array(fc.integer(), { maxLength: 3 }),
    object: fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
  };
  const wrong = Object.entries(all)
    .filter(([type]) => !types.includes('any') && !types.includes(type))
    .filter(([type]) => !(type === 'integer' && types.includes('number')))
    .map(([, arbitrary]) => arbitrary);
  // A field that accepts anything: a type it surely was not written for.
  return wrong.length ? fc.oneof(...wrong) : fc.constant([[[[]]]]);
}

/** Whole bodies: the valid body is given so that some kinds can add to it. */
export function hostileBodyKinds(valid: unknown): Record<string, fc.Arbitrary<RawJson>> {
  const validText = JSON.stringify(valid);
  const plus = (extra: string) =>
    validText.startsWith('{') && validText !== '{}' ? `${validText.slice(0, -1)},${extra}}` : `{${extra}}`;
  return {
    deep_array: depth.map((n) => RawJson.text('['.repeat(n) + ']'.repeat(n))),
    deep_object: depth.map((n) => RawJson.text('{"a":'.repeat(n) + '1' + '}'.repeat(n))),
    not_an_object: fc.constantFrom('[]', 'null', '"x"', '1e309', 'true', '[{}]').map(RawJson.text),
    unknown_field: fc
      .string({ minLength: 1, maxLength: 8, unit: 'grapheme-ascii' })
      .map((k) => RawJson.text(plus(`${JSON.stringify(`desconhecido_${k}`)}:1`))),
    proto_key: fc
      .constantFrom('"__proto__":{"master":true}', '"__proto__":{"ativo":false}', '"constructor":{"prototype":{"x":1}}')
      .map((extra) => RawJson.text(plus(extra))),
    // (An empty body is not here: express reads it as {}, a PATCH that changes nothing.)
    malformed_json: fc.constantFrom('{"a":', '{a:1}', "{'a':1}", '{"a":1}}', '\u0000', '[1,]').map(RawJson.text),
    // Bytes that are not UTF-8 at the start of the body's first string value.
    invalid_utf8: fc.constantFrom([0xff, 0xfe], [0xc0, 0xaf], [0xed, 0xa0, 0x80]).map((bytes) => {
      const text = validText.includes('":"') ? validText : '{"nome":""}';
      const at = text.indexOf('":"') + 3;
      return new RawJson(
        Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at))]),
      );
    }),
  };
}

/** Values of a query parameter, already percent-encoded. `extra` adds parameters (repeats, brackets). */
export interface QueryCase {
  value?: string;
  /** Raw "name=value" pairs added to the query instead of, or beside, the parameter. */
  extra?: string[];
}

const enc = encodeURIComponent;
const badPercent = fc.constantFrom('%ED%A0%80', '%FF', '%C0%AF', '%E0%80%80', '%F4%90%80%80', '%', '%zz', '%E2%82');

export function hostileQueryKinds(name: string, valid?: string): Record<string, fc.Arbitrary<QueryCase>> {
  return {
    nul: halves(valid).map(([a, b]) => ({ value: `${enc(a)}%00${enc(b)}` })),
    invalid_percent: fc
      .tuple(halves(valid), badPercent)
      .map(([[a, b], bad]) => ({ value: `${enc(a)}${bad}${enc(b)}` })),
    lone_surrogate: fc
      .tuple(halves(valid), surrogate)
      .map(([[a, b], s]) => ({ value: `${enc(a)}${percentSurrogate(s)}${enc(b)}` })),
    long_string: fc.constantFrom('a', '%C3%A9').map((c) => ({ value: c.repeat(URL_LONG / c.length) })),
    wrong_type: fc
      .constantFrom('abc', 'talvez', '[]', '{}', 'true', 'null', '', '%20', '1.5', '0x10')
      .map((value) => ({ value })),
    big_number: fc
      .constantFrom(
        '1e309',
        '-1e309',
        '9007199254740993',
        '2147483648',
        '-2147483649',
        '99999999999999999999',
        '-0',
        '-1',
      )
      .map((value) => ({ value })),
    repeated: fc.tuple(fc.nat(9), fc.nat(9)).map(([a, b]) => ({ extra: [`${name}=${a}`, `${name}=${b}`] })),
    brackets: fc
      .constantFrom(`${name}[a]=1`, `${name}[]=1`, `${name}[__proto__][x]=1`, `${name}[${'['.repeat(2000)}]=1`)
      .map((pair) => ({ extra: [pair] })),
    proto_param: fc
      .constantFrom('__proto__=1', '__proto__[master]=true', 'constructor[prototype][master]=true', 'hasOwnProperty=1')
      .map((pair) => ({ extra: [pair] })),
  };
}

/** Path parameter values, already percent-encoded (a segment each). */
export function hostilePathKinds(valid?: string): Record<string, fc.Arbitrary<string>> {
  return {
    nul: halves(valid).map(([a, b]) => `${enc(a)}%00${enc(b)}`),
    invalid_percent: fc.tuple(halves(valid), badPercent).map(([[a, b], bad]) => `${enc(a)}${bad}${enc(b)}`),
    lone_surrogate: fc.tuple(halves(valid), surrogate).map(([[a, b], s]) => `${enc(a)}${percentSurrogate(s)}${enc(b)}`),
    long_string: fc.constantFrom('a', '%C3%A9').map((c) => c.repeat(URL_LONG / c.length)),
    wrong_type: fc.constantFrom('abc', 'true', 'null', '%20', '1.5', '-', '%7B%7D'),
    big_number: fc.constantFrom(
      '1e309',
      '9007199254740993',
      '2147483648',
      '-2147483649',
      '-0',
      '0',
      '99999999999999999999',
    ),
    dots_and_slashes: fc.constantFrom('..', '%2e%2e', '%2F', '..%2F..%2Fsaude', '%5C', '.'),
    proto: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString'),
  };
}

/** One sample of every kind, decided by the seed. */
export function sampleKinds<T>(kinds: Record<string, fc.Arbitrary<T>>, seed: number): Hostile<T>[] {
  return Object.entries(kinds).map(([kind, arbitrary], i) => ({
    kind,
    value: fc.sample(arbitrary, { seed: seed + i, numRuns: 1 })[0] as T,
  }));
}
