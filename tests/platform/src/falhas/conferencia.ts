import pg from 'pg';
import { waitFor } from '@hub/testing';
import type { Assinante } from '../e2e/receptor';
import type { Platform } from '../platform';
import { CAMINHOS, type Resultado } from './ensaio';

/** What a scenario measured, for docs/benchmarks.md (printed with FALHAS_NUMEROS=1). */
export interface Numeros {
  cenario: string;
  eventos: number;
  porSegundo: number;
  /** How long the fault itself took (stop and start, or the stop alone). */
  falhaMs: number;
  /** Answers other than 2xx, by "status codigo". */
  recusas: Record<string, number>;
  /** Events refused at least once (each was sent again and accepted). */
  eventosRecusados: number;
  /** From the fault's start to the last refusal (0 when none). */
  recusasDuranteMs: number;
  /** The longest time without any delivery arriving, from the fault's start on. */
  entregasParadasMs: number;
  /** From the burst's end to the arrival of the last delivery of an accepted event. */
  conclusaoMs: number;
  entregas: number;
  /** Requests on the wire beyond one per delivery (each a copy with the same webhook-id). */
  duplicadas: number;
}

/**
 * The assertions of every scenario: 0 accepted events lost (each of their deliveries arrives at the
 * subscriber), duplicates only as copies with the same `webhook-id`, every refusal a problem+json
 * 503/429 with Retry-After, and every service still the same process, ready again.
 */
export async function conferir(
  cenario: string,
  platform: Platform,
  assinante: Assinante,
  resultado: Resultado,
  options: { porSegundo: number; entregasEmMs?: number },
): Promise<Numeros> {
  const esperadas = new Set([...resultado.aceitos.values()].flat());
  const recebidas = () => CAMINHOS.flatMap((caminho) => assinante.de(caminho));
  const faltando = () => {
    const vistas = new Set(recebidas().map((r) => String(r.cabecalhos['webhook-id'])));
    return [...esperadas].filter((id) => !vistas.has(id));
  };
  // No service exited: the same processes (a process that is gone is reported with its last words).
  const saidos = resultado.antes
    .filter((antes) => !platform.processos().some((p) => p.pid === antes.pid && p.running))
    .map((p) => `${p.name} (pid ${p.pid}) exited:\n${platform.output(p.name).slice(-1_500)}`);
  // With a service gone nothing may ever arrive: wait less, the report says why.
  await waitFor(() => faltando().length === 0, {
    timeoutMs: saidos.length ? 10_000 : (options.entregasEmMs ?? 90_000),
    intervalMs: 250,
  }).catch(() => undefined);
  const perdidas = faltando();

  // A copy on the wire is the same delivery again: one webhook-id per (event, subscription).
  const todas = recebidas();
  const idsPorEntrega = new Map<string, Set<string>>();
  for (const r of todas) {
    const chave = `${(JSON.parse(r.corpo.toString('utf8')) as { id: string }).id} ${r.caminho}`;
    const ids = idsPorEntrega.get(chave) ?? new Set<string>();
    ids.add(String(r.cabecalhos['webhook-id']));
    idsPorEntrega.set(chave, ids);
  }
  const copiasComOutroId = [...idsPorEntrega]
    .filter(([, ids]) => ids.size !== 1)
    .map(([k, ids]) => `${k}: ${[...ids]}`);
  const desconhecidas = [...new Set(todas.map((r) => String(r.cabecalhos['webhook-id'])))].filter(
    (id) => !esperadas.has(id),
  );
  const PRONTOS = 'every service ready again';
  let naoProntos: string[] = [];
  const prontos = saidos.length
    ? 'not asked: a service exited'
    : await waitFor(
        async () => {
          const respostas = await Promise.all(
            platform.processos().map(async (p) => {
              const resposta = await fetch(`${p.url}/saude/prontidao`, { signal: AbortSignal.timeout(2_000) }).catch(
                (error: Error) => ({ status: 0, text: async () => error.message }),
              );
              return { p, status: resposta.status, texto: resposta.status === 200 ? '' : await resposta.text() };
            }),
          );
          naoProntos = respostas
            .filter((r) => r.status !== 200)
            .map((r) => `${r.p.name}: ${r.status} ${r.texto}\n${platform.output(r.p.name).slice(-3_000)}`);
          return naoProntos.length === 0 && PRONTOS;
        },
        { timeoutMs: 60_000, intervalMs: 250, what: PRONTOS },
      ).catch(() => naoProntos.join('\n\n'));

  // One assertion over everything, so a failing run says all that went wrong at once.
  expect({
    falha: resultado.falha.erro ?? 'ok',
    recusasIndevidas: { quantas: resultado.indevidas.length, exemplos: resultado.indevidas.slice(0, 5) },
    abandonados: resultado.abandonados.length,
    saidos,
    entregasPerdidas: { quantas: perdidas.length, de: esperadas.size, exemplos: perdidas.slice(0, 3) },
    copiasComOutroId: copiasComOutroId.slice(0, 5),
    desconhecidas: desconhecidas.slice(0, 5),
    prontos,
  }).toEqual({
    falha: 'ok',
    recusasIndevidas: { quantas: 0, exemplos: [] },
    abandonados: 0,
    saidos: [],
    entregasPerdidas: { quantas: 0, de: resultado.aceitos.size * CAMINHOS.length, exemplos: [] },
    copiasComOutroId: [],
    desconhecidas: [],
    prontos: PRONTOS,
  });

  const numeros = medir(cenario, resultado, todas, options.porSegundo);
  if (process.env.FALHAS_NUMEROS) console.log(`${cenario}: ${JSON.stringify(numeros)}`);
  return numeros;
}

function medir(cenario: string, resultado: Resultado, todas: ReturnType<Assinante['de']>, porSegundo: number): Numeros {
  const { falha, recusas } = resultado;
  const chegadas = todas.map((r) => r.em).sort((a, b) => a - b);
  let pausa = 0;
  let anterior = falha.inicio;
  for (const em of chegadas.filter((t) => t >= falha.inicio)) {
    pausa = Math.max(pausa, em - anterior);
    anterior = em;
  }
  const primeiras = new Map<string, number>();
  for (const r of todas) {
    const id = String(r.cabecalhos['webhook-id']);
    primeiras.set(id, Math.min(primeiras.get(id) ?? Number.POSITIVE_INFINITY, r.em));
  }
  const porTipo: Record<string, number> = {};
  for (const r of recusas) porTipo[`${r.status} ${r.codigo}`] = (porTipo[`${r.status} ${r.codigo}`] ?? 0) + 1;
  return {
    cenario,
    eventos: resultado.aceitos.size,
    porSegundo,
    falhaMs: falha.fim - falha.inicio,
    recusas: porTipo,
    eventosRecusados: new Set(recusas.map((r) => r.n)).size,
    recusasDuranteMs: recusas.length ? Math.max(...recusas.map((r) => r.em)) - falha.inicio : 0,
    entregasParadasMs: pausa,
    conclusaoMs: Math.max(0, Math.max(...primeiras.values()) - resultado.fimDaRajada),
    entregas: primeiras.size,
    duplicadas: todas.length - primeiras.size,
  };
}

/**
 * The database's side of a scenario, once the deliveries arrived: every delivery ends concluida
 * (retries and the sweeper finish what the fault interrupted), and each has exactly one successful
 * attempt recorded (a record is never written twice, whatever the copies on the wire).
 */
export async function conferirRegistros(platform: Platform): Promise<void> {
  // A connection of its own: the stage's may have died with the database (57P01 on a restart).
  const db = new pg.Client({ connectionString: platform.databases['hub-api'] });
  await db.connect();
  try {
    const estado = async () =>
      (
        await db.query<{ entregas: boolean; nao_concluidas: number; duas_vezes: number; sem_registro: number }>(
          `select exists (select 1 from entrega) as entregas,
                (select count(*)::int from entrega where situacao <> 'concluida') as nao_concluidas,
                (select count(*)::int from (select entrega_id from tentativa where sucesso
                                            group by entrega_id having count(*) > 1) x) as duas_vezes,
                (select count(*)::int from entrega e where not exists
                   (select 1 from tentativa t where t.entrega_id = e.id and t.sucesso)) as sem_registro`,
        )
      ).rows[0]!;
    await waitFor(async () => (await estado()).nao_concluidas === 0, { timeoutMs: 30_000, intervalMs: 250 }).catch(
      () => undefined,
    );
    expect(await estado()).toEqual({ entregas: true, nao_concluidas: 0, duas_vezes: 0, sem_registro: 0 });
  } finally {
    await db.end();
  }
}
