// The benchmark event (issue 8): POST /eventos with 1 KiB of dados validated against a schema of 20
// rules, from a real application token; its registration through the gateway as a master would do it.
// Shared by bench/publication/throughput-and-latency.ts and bench/floor/compare.ts, so both publish the same
// bytes.
import type { Platform } from './platform';

/** An order of six items: the schema checks every field, the body is padded to 1 KiB of dados. */
export const ESQUEMA = {
  type: 'object',
  required: ['numero', 'cliente', 'itens', 'total', 'moeda', 'observacao'],
  additionalProperties: false,
  properties: {
    numero: { type: 'string', pattern: '^P-[0-9]{6,12}$' },
    cliente: {
      type: 'object',
      required: ['id', 'nome', 'email'],
      additionalProperties: false,
      properties: {
        id: { type: 'string', minLength: 1, maxLength: 64 },
        nome: { type: 'string', minLength: 1, maxLength: 200 },
        email: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+$' },
      },
    },
    itens: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: {
        type: 'object',
        required: ['sku', 'descricao', 'quantidade', 'preco'],
        additionalProperties: false,
        properties: {
          sku: { type: 'string', pattern: '^[A-Z]{3}-[0-9]{4}$' },
          descricao: { type: 'string', maxLength: 200 },
          quantidade: { type: 'integer', minimum: 1, maximum: 1000 },
          preco: { type: 'number', minimum: 0 },
        },
      },
    },
    total: { type: 'number', minimum: 0 },
    moeda: { enum: ['BRL', 'USD', 'EUR'] },
    observacao: { type: 'string', maxLength: 2000 },
  },
};

export function dadosDe1KiB() {
  const dados = {
    numero: 'P-00012345',
    cliente: { id: 'cli-8842', nome: 'Maria da Silva Pereira', email: 'maria.pereira@cliente.example' },
    itens: Array.from({ length: 6 }, (_, i) => ({
      sku: `ABC-${String(1000 + i)}`,
      descricao: `Produto de teste número ${i + 1}`,
      quantidade: i + 1,
      preco: 19.9 + i,
    })),
    total: 823.4,
    moeda: 'BRL',
    observacao: '',
  };
  dados.observacao = 'x'.repeat(1024 - Buffer.byteLength(JSON.stringify(dados)));
  if (Buffer.byteLength(JSON.stringify(dados)) !== 1024) throw new Error('dados is not 1 KiB');
  return dados;
}

export async function call<T>(method: string, url: string, token: string | undefined, body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${url} answered ${response.status}: ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/**
 * The registry through the gateway as a master would: one publisher and, for each entry of `tipos`,
 * an event type with the schema and one subscriber per URL. Gives the publisher's token and, per
 * entry, the body of POST /eventos (after one real publication that must create a delivery per URL),
 * and the master's token that made them (for the operator routes).
 */
export async function registrarPublicacao<K extends string>(
  platform: Platform,
  tipos: Record<K, string[]>,
): Promise<{ token: string; corpos: Record<K, string>; master: string }> {
  const run = Date.now().toString(36);
  const domain = (process.env.COMPANY_DOMAIN ?? 'empresa.com.br').replace(/^@/, '');
  const { access_token: master } = await call<{ access_token: string }>(
    'POST',
    `${platform.identityUrl}/token`,
    undefined,
    { email: `bench-master@${domain}`, nome: 'Bench', master: true },
  );
  const api = platform.gatewayUrl;
  let assinantes = 0;
  const aplicativo = (nome: string) =>
    call<{ id: string; client_id: string }>('POST', `${api}/aplicativo`, master, {
      nome,
      client_id: `bench_${nome.toLowerCase().replace(/\W/g, '_')}_${run}`,
    });
  const dono = await aplicativo('Publicador');
  const { access_token: token } = await call<{ access_token: string }>(
    'POST',
    `${platform.identityUrl}/token/aplicativo`,
    undefined,
    { client_id: dono.client_id },
  );
  const corpos = {} as Record<K, string>;
  for (const [chave, urls] of Object.entries(tipos) as [K, string[]][]) {
    const tipo = await call<{ id: string }>('POST', `${api}/tipo-de-evento`, master, {
      nome: `pedido_${run}.${chave}`,
      aplicativo_id: dono.id,
    });
    await call('POST', `${api}/versao-de-esquema`, master, { tipo_de_evento_id: tipo.id, esquema: ESQUEMA });
    for (const url of urls) {
      const assinante = await aplicativo(`Assinante ${++assinantes}`);
      await call('POST', `${api}/assinatura`, master, {
        aplicativo_assinante_id: assinante.id,
        tipo_de_evento_id: tipo.id,
        versao_do_esquema: 1,
        url_de_destino: url,
      });
    }
    corpos[chave] = JSON.stringify({
      tipo_de_evento_id: tipo.id,
      versao_do_esquema: 1,
      entidade_id: 'pedido-12345',
      dados: dadosDe1KiB(),
    });
    // One real publication first: the token, the schema and the subscriptions work.
    const primeiro = await call<{ entregas: unknown[] }>('POST', `${api}/eventos`, token, JSON.parse(corpos[chave]));
    if (primeiro.entregas.length !== urls.length)
      throw new Error(`${primeiro.entregas.length} deliveries, not ${urls.length}`);
  }
  return { token, corpos, master };
}
