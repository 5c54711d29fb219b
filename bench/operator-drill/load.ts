import { execFile } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import { promisify } from 'node:util';

/**
 * The operator drill of issue 18, against a running `pnpm start` (ports 1808x, see
 * docs/benchmarks.md "Operator drill"): a steady burst of POST /eventos through the gateway with an
 * application token, one Idempotency-Key per event, sent again after Retry-After on 503/429 (as
 * @hub/client does); a fault (DRILL_FALHA, a shell command) started DRILL_FALHA_APOS seconds in;
 * every service's /saude/prontidao and /metrics watched every 500 ms; then the checks: every
 * accepted event's deliveries arrived (copies only with the same webhook-id), no delivery left
 * em_andamento or pendente, the error queue agrees with fila_de_erro, the panel's reads answer.
 *
 *   DRILL_NOME=pg-fast DRILL_FALHA='curl -sXPOST 127.0.0.1:18090/pg/restart?mode=fast' npx tsx bench/operator-drill/load.ts
 *
 * DRILL_EVENTOS (3000), DRILL_RITMO (events/s, 100), DRILL_ENTREGAS_EM (s to wait for deliveries, 300).
 */
const run = promisify(execFile);
const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const GATEWAY = env('DRILL_GATEWAY', 'http://127.0.0.1:18080');
const IDENTITY = env('DRILL_IDENTITY', 'http://127.0.0.1:18085');
const SERVICOS: Record<string, { prontidao: string; metricas: string }> = {
  gateway: { prontidao: `${GATEWAY}/saude/prontidao`, metricas: 'http://127.0.0.1:19080/metrics' },
  access: { prontidao: 'http://127.0.0.1:18081/saude/prontidao', metricas: 'http://127.0.0.1:18081/metrics' },
  function: { prontidao: 'http://127.0.0.1:18082/saude/prontidao', metricas: 'http://127.0.0.1:18082/metrics' },
  'hub-api': { prontidao: 'http://127.0.0.1:18083/saude/prontidao', metricas: 'http://127.0.0.1:18083/metrics' },
  'delivery-worker': {
    prontidao: 'http://127.0.0.1:18084/saude/prontidao',
    metricas: 'http://127.0.0.1:18084/metrics',
  },
};
const NOME = env('DRILL_NOME', `d${Date.now().toString(36)}`);
const EVENTOS = Number(env('DRILL_EVENTOS', '3000'));
const RITMO = Number(env('DRILL_RITMO', '100'));
const FALHA_APOS_MS = Number(env('DRILL_FALHA_APOS', '10')) * 1000;
const FALHA = process.env.DRILL_FALHA;
const ENTREGAS_EM_MS = Number(env('DRILL_ENTREGAS_EM', '300')) * 1000;
const RECEPTOR_PORTA = Number(env('DRILL_RECEPTOR_PORTA', '18087'));
const LOG = env('DRILL_LOG', `/tmp/drill/${NOME}.log`);

const t0 = Date.now();
const rel = (t = Date.now()) => `${((t - t0) / 1000).toFixed(1)}s`;
const say = (text: string) => {
  const line = `${rel()} ${text}`;
  process.stdout.write(`${line}\n`);
  appendFileSync(LOG, `${line}\n`);
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The subscriber: records every webhook-id per path. */
const recebidas: { caminho: string; webhookId: string; eventoId: string; em: number }[] = [];
const receptor = http.createServer((req, res) => {
  const partes: Buffer[] = [];
  req.on('data', (p: Buffer) => partes.push(p));
  req.on('end', () => {
    let eventoId = '?';
    try {
      eventoId = String((JSON.parse(Buffer.concat(partes).toString('utf8')) as { id: string }).id);
    } catch {}
    recebidas.push({ caminho: req.url ?? '', webhookId: String(req.headers['webhook-id']), eventoId, em: Date.now() });
    res.writeHead(204).end();
  });
});

async function json<T = Record<string, unknown>>(
  url: string,
  init: RequestInit = {},
): Promise<{ status: number; body: T }> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

async function preparar() {
  const master = (
    await json<{ access_token: string }>(`${IDENTITY}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'operador@empresa.com.br', nome: 'Operador', master: true }),
    })
  ).body.access_token;
  const gw = async (method: string, path: string, body?: unknown) => {
    const r = await json<{ id: string }>(`${GATEWAY}${path}`, {
      method,
      headers: { authorization: `Bearer ${master}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const loja = await gw('POST', '/aplicativo', { nome: `Loja ${NOME}`, client_id: `loja-${NOME}` });
  const erp = await gw('POST', '/aplicativo', { nome: `ERP ${NOME}`, client_id: `erp-${NOME}` });
  const tipo = await gw('POST', '/tipo-de-evento', { nome: `pedido.${NOME}`, aplicativo_id: loja.id });
  await gw('POST', '/versao-de-esquema', { tipo_de_evento_id: tipo.id, esquema: { type: 'object' } });
  for (const caminho of ['a', 'b'])
    await gw('POST', '/assinatura', {
      aplicativo_assinante_id: erp.id,
      tipo_de_evento_id: tipo.id,
      versao_do_esquema: 1,
      url_de_destino: `http://127.0.0.1:${RECEPTOR_PORTA}/${NOME}/${caminho}`,
      maximo_de_tentativas: 10,
    });
  const app = (
    await json<{ access_token: string }>(`${IDENTITY}/token/aplicativo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: `loja-${NOME}` }),
    })
  ).body.access_token;
  return { master, gw, tipoId: tipo.id, app };
}

interface Recusa {
  status: number;
  codigo: string;
  tipo: string;
  retryAfter: string | null;
  em: number;
}

/** Watches readiness and /metrics; logs every change of a service's state. */
function vigiar() {
  const estado = new Map<string, string>();
  const mudancas: { servico: string; de: string; para: string; em: number }[] = [];
  let ativo = true;
  const olhar = async (url: string) => {
    try {
      const r = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      const corpo = await r.text();
      if (r.status === 200) return '200';
      return `${r.status} ${corpo.slice(0, 160)}`;
    } catch (error) {
      return `sem resposta (${(error as Error).cause ? String((error as { cause: { code?: string } }).cause.code) : (error as Error).name})`;
    }
  };
  const laco = (async () => {
    while (ativo) {
      await Promise.all(
        Object.entries(SERVICOS).map(async ([nome, urls]) => {
          const [prontidao, metricas] = await Promise.all([olhar(urls.prontidao), olhar(urls.metricas)]);
          const agora = `prontidao ${prontidao} · metrics ${metricas.slice(0, 3)}`;
          const antes = estado.get(nome);
          if (antes !== agora) {
            if (antes !== undefined) {
              mudancas.push({ servico: nome, de: antes, para: agora, em: Date.now() });
              say(`[vigia] ${nome}: ${agora}`);
            }
            estado.set(nome, agora);
          }
        }),
      );
      await sleep(500);
    }
  })();
  return {
    mudancas,
    parar: async () => {
      ativo = false;
      await laco;
    },
  };
}

async function main() {
  await new Promise<void>((resolve) => receptor.listen(RECEPTOR_PORTA, '127.0.0.1', resolve));
  const { master, gw, tipoId, app } = await preparar();
  say(`drill ${NOME}: ${EVENTOS} events at ${RITMO}/s, fault after ${FALHA_APOS_MS / 1000}s: ${FALHA ?? 'none'}`);
  const vigia = vigiar();
  const aceitos = new Map<string, string[]>();
  const recusas: Recusa[] = [];
  const abandonados: number[] = [];
  const inicio = Date.now();
  let falha: Promise<void> | undefined;
  const tempos: { inicio?: number; fim?: number } = {};

  const publicar = async (n: number) => {
    const corpo = JSON.stringify({
      tipo_de_evento_id: tipoId,
      versao_do_esquema: 1,
      entidade_id: `p-${n}`,
      dados: { n },
    });
    const prazo = Date.now() + 180_000;
    for (let tentativa = 0; Date.now() < prazo; tentativa += 1) {
      let espera: number;
      try {
        const res = await fetch(`${GATEWAY}/eventos`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${app}`,
            'content-type': 'application/json',
            'idempotency-key': `${NOME}-${n}`,
          },
          body: corpo,
          signal: AbortSignal.timeout(30_000),
        });
        const text = await res.text();
        if (res.ok) {
          const evento = JSON.parse(text) as { id: string; entregas: { id: string }[] };
          aceitos.set(
            evento.id,
            evento.entregas.map((e) => e.id),
          );
          return;
        }
        const tipo = res.headers.get('content-type') ?? '';
        let codigo = tipo;
        try {
          codigo = String((JSON.parse(text) as { codigo?: string }).codigo);
        } catch {}
        const retryAfter = res.headers.get('retry-after');
        recusas.push({ status: res.status, codigo, tipo, retryAfter, em: Date.now() });
        espera =
          retryAfter === null ? Math.min(5_000, 250 * 2 ** tentativa) : Math.min(10_000, Number(retryAfter) * 1000);
      } catch (error) {
        const causa = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        recusas.push({ status: 0, codigo: causa, tipo: '', retryAfter: null, em: Date.now() });
        espera = Math.min(5_000, 250 * 2 ** tentativa);
      }
      await sleep(espera);
    }
    abandonados.push(n);
  };

  const publicando: Promise<void>[] = [];
  for (let n = 0; n < EVENTOS; n += 1) {
    const quando = inicio + (n * 1000) / RITMO;
    if (quando > Date.now()) await sleep(quando - Date.now());
    if (FALHA && !falha && Date.now() - inicio >= FALHA_APOS_MS) {
      tempos.inicio = Date.now();
      say(`[falha] ${FALHA}`);
      falha = run('sh', ['-c', FALHA], { maxBuffer: 1 << 20 }).then(
        ({ stdout }) => {
          tempos.fim = Date.now();
          say(`[falha] over: ${stdout.trim()}`);
        },
        (error: Error) => {
          tempos.fim = Date.now();
          say(`[falha] failed: ${error.message}`);
        },
      );
    }
    publicando.push(publicar(n));
  }
  await Promise.all(publicando);
  const fimDaRajada = Date.now();
  await falha;
  say(`burst over: ${aceitos.size} accepted, ${abandonados.length} given up, ${recusas.length} refusals`);

  const esperadas = new Set([...aceitos.values()].flat());
  const faltando = () => {
    const vistas = new Set(recebidas.filter((r) => r.caminho.startsWith(`/${NOME}/`)).map((r) => r.webhookId));
    return [...esperadas].filter((id) => !vistas.has(id));
  };
  const limite = Date.now() + ENTREGAS_EM_MS;
  while (faltando().length && Date.now() < limite) await sleep(500);
  const perdidas = faltando();
  const minhas = recebidas.filter((r) => r.caminho.startsWith(`/${NOME}/`));
  const primeiras = new Map<string, number>();
  const idsPorEntrega = new Map<string, Set<string>>();
  for (const r of minhas) {
    primeiras.set(r.webhookId, Math.min(primeiras.get(r.webhookId) ?? Number.POSITIVE_INFINITY, r.em));
    const chave = `${r.eventoId} ${r.caminho}`;
    idsPorEntrega.set(chave, (idsPorEntrega.get(chave) ?? new Set()).add(r.webhookId));
  }
  const outroId = [...idsPorEntrega.values()].filter((ids) => ids.size > 1).length;
  const desconhecidas = [...primeiras.keys()].filter((id) => !esperadas.has(id)).length;

  // The longest gap without any delivery from the fault's start on, and refusals by kind.
  let pausa = 0;
  let anterior = tempos.inicio ?? inicio;
  for (const em of minhas
    .map((r) => r.em)
    .filter((t) => t >= anterior)
    .sort((a, b) => a - b)) {
    pausa = Math.max(pausa, em - anterior);
    anterior = em;
  }
  const porTipo: Record<string, number> = {};
  for (const r of recusas) {
    const chave = `${r.status} ${r.codigo}${r.status && !r.tipo.startsWith('application/problem+json') ? ` (${r.tipo})` : ''}${r.status && r.retryAfter === null ? ' sem Retry-After' : ''}`;
    porTipo[chave] = (porTipo[chave] ?? 0) + 1;
  }
  const indevidas = recusas.filter(
    (r) => !r.tipo.startsWith('application/problem+json') || ![503, 429].includes(r.status) || r.retryAfter === null,
  );
  await vigia.parar();

  // The states of the deliveries, the error queue against fila_de_erro, the panel's reads.
  const olhar = async (method: string, path: string) => {
    const r = await json(`${GATEWAY}${path}`, { method, headers: { authorization: `Bearer ${master}` } });
    return { status: r.status, body: r.body };
  };
  // The deliveries of this drill by state (GET /entrega's total per situacao).
  const situacoes: Record<string, number> = {};
  for (const situacao of [
    'pendente',
    'em_andamento',
    'aguardando_nova_tentativa',
    'concluida',
    'fila_de_erro',
    'cancelada',
  ]) {
    const pagina = await olhar('GET', `/entrega?tipo_de_evento_id=${tipoId}&situacao=${situacao}&tamanho=1`);
    const total = (pagina.body as { total?: number }).total;
    if (pagina.status !== 200 || total) situacoes[situacao] = pagina.status === 200 ? Number(total) : pagina.status;
  }
  const fila = await olhar('GET', '/fila');
  const conciliar = await olhar('POST', '/fila/erro/conciliar');
  const destino = await olhar('GET', '/destino');
  const resumo = await olhar('GET', '/evento/resumo');
  void gw;

  const numeros = {
    nome: NOME,
    eventos: EVENTOS,
    ritmo: RITMO,
    aceitos: aceitos.size,
    abandonados: abandonados.length,
    falhaMs: tempos.fim && tempos.inicio ? tempos.fim - tempos.inicio : 0,
    recusas: porTipo,
    recusasIndevidas: indevidas.length,
    eventosRecusadosAte: recusas.length ? `${rel(Math.max(...recusas.map((r) => r.em)))}` : '-',
    entregasEsperadas: esperadas.size,
    entregasPerdidas: perdidas.length,
    duplicadas: minhas.length - primeiras.size,
    copiasComOutroId: outroId,
    desconhecidas,
    entregasParadasMs: pausa,
    conclusaoMs: primeiras.size ? Math.max(...primeiras.values()) - fimDaRajada : 0,
    situacoes,
    fila: fila.status,
    filas: Array.isArray(fila.body)
      ? (fila.body as { nome: string; mensagens: number }[]).map((f) => `${f.nome}=${f.mensagens}`).join(' ')
      : fila.body,
    conciliar: `${conciliar.status} ${JSON.stringify(conciliar.body)}`,
    destino: destino.status,
    resumo: resumo.status,
    mudancasDeProntidao: vigia.mudancas.map((m) => `${rel(m.em)} ${m.servico}: ${m.para}`),
  };
  say(`RESULT ${JSON.stringify(numeros, null, 2)}`);
  receptor.close();
  process.exit(0);
}

main().catch((error) => {
  say(`drill failed: ${(error as Error).stack}`);
  process.exit(1);
});
