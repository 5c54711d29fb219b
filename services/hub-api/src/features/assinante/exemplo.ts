/**
 * An example document for a registered JSON Schema, for the portal to show beside the schema: the
 * schema's own `examples`, `default`, `const` or first `enum` value where it has one, otherwise a value
 * of its type within its bounds (required properties only, one array item). Not guaranteed valid
 * against every keyword (patterns, combinations of allOf): an illustration, never used to publish.
 */
type Esquema = Record<string, unknown>;

const PROFUNDIDADE_MAXIMA = 12;

const FORMATOS: Record<string, string> = {
  'date-time': '2026-12-02T12:00:00.000Z',
  date: '2026-12-02',
  time: '12:00:00Z',
  email: 'ana@example.com',
  uri: 'https://example.com/',
  uuid: '01900000-0000-7000-8000-000000000001',
  hostname: 'example.com',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
};

const ehEsquema = (valor: unknown): valor is Esquema =>
  typeof valor === 'object' && valor !== null && !Array.isArray(valor);

function primeiroTipo(esquema: Esquema): string | undefined {
  const tipo = esquema.type;
  if (typeof tipo === 'string') return tipo;
  if (Array.isArray(tipo)) return tipo.find((t) => t !== 'null') ?? tipo[0];
  if (ehEsquema(esquema.properties)) return 'object';
  if (esquema.items !== undefined) return 'array';
  return undefined;
}

function texto(esquema: Esquema): string {
  if (typeof esquema.format === 'string' && FORMATOS[esquema.format]) return FORMATOS[esquema.format]!;
  const minimo = typeof esquema.minLength === 'number' ? Math.min(esquema.minLength, 256) : 0;
  const maximo = typeof esquema.maxLength === 'number' ? esquema.maxLength : Number.POSITIVE_INFINITY;
  const base = 'exemplo';
  if (base.length < minimo) return base.padEnd(minimo, 'o');
  return base.slice(0, Math.max(minimo, Math.min(maximo, base.length)));
}

function numero(esquema: Esquema, inteiro: boolean): number {
  const minimo = typeof esquema.minimum === 'number' ? esquema.minimum : undefined;
  const exclusivo = typeof esquema.exclusiveMinimum === 'number' ? esquema.exclusiveMinimum : undefined;
  const maximo = typeof esquema.maximum === 'number' ? esquema.maximum : undefined;
  let valor = minimo ?? (exclusivo !== undefined ? exclusivo + (inteiro ? 1 : 0.5) : Math.min(1, maximo ?? 1));
  if (inteiro) valor = Math.ceil(valor);
  return valor;
}

function objeto(esquema: Esquema, profundidade: number): Record<string, unknown> {
  const propriedades = ehEsquema(esquema.properties) ? esquema.properties : {};
  const exigidas = Array.isArray(esquema.required) ? esquema.required.filter((n) => typeof n === 'string') : [];
  const nomes = exigidas.length > 0 ? exigidas : Object.keys(propriedades);
  return Object.fromEntries(nomes.map((nome) => [nome, exemploDe(propriedades[nome] ?? {}, profundidade + 1)]));
}

export function exemploDe(esquema: unknown, profundidade = 0): unknown {
  if (!ehEsquema(esquema) || profundidade > PROFUNDIDADE_MAXIMA) return null;
  if (Array.isArray(esquema.examples) && esquema.examples.length > 0) return esquema.examples[0];
  if (esquema.default !== undefined) return esquema.default;
  if (esquema.const !== undefined) return esquema.const;
  if (Array.isArray(esquema.enum) && esquema.enum.length > 0) return esquema.enum[0];
  for (const chave of ['oneOf', 'anyOf', 'allOf'] as const) {
    const opcoes = esquema[chave];
    if (Array.isArray(opcoes) && opcoes.length > 0 && primeiroTipo(esquema) === undefined)
      return exemploDe(opcoes[0], profundidade + 1);
  }
  switch (primeiroTipo(esquema)) {
    case 'object':
      return objeto(esquema, profundidade);
    case 'array': {
      const minimo = typeof esquema.minItems === 'number' ? Math.min(esquema.minItems, 3) : 1;
      return Array.from({ length: Math.max(1, minimo) }, () => exemploDe(esquema.items ?? {}, profundidade + 1));
    }
    case 'string':
      return texto(esquema);
    case 'integer':
      return numero(esquema, true);
    case 'number':
      return numero(esquema, false);
    case 'boolean':
      return true;
    default:
      return null;
  }
}
