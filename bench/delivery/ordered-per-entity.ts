// Ordered delivery per entity (docs/decisions/ordered-delivery-per-entity.md): what keeping order
// costs. The same load twice, each on a fresh hub and one worker process: events of 1,000 entities
// (entidade_id = event number mod 1,000), each delivered to 4 subscriptions on 4 local receivers
// that answer 200 at once (as bench/delivery/worker-throughput.ts, 50 POSTs at once per destination), published
// at the delivery benchmark's rate (BENCH_ORDEM_RATE deliveries/s, default 2,000: its target for one worker)
// for BENCH_ORDEM_DURATION seconds (10) — first with the subscriptions unordered, then ordered.
// Publication is the platform's own: hub-api's group commit (gravacao-em-grupo.ts, so
// SQL_DA_GRAVACAO, which numbers the ordered deliveries) and its dispatcher (despacho.ts, jobs
// published after the commit; a waiting delivery's job is not), with the worker passing each
// entity's turn. Throughput: deliveries ÷ seconds from the first publication to the last attempt's
// end; latency: publication (recebido_em) to the end of the delivery's successful attempt.
// Prints ordered ÷ unordered (the target: ≥ 0.8) and writes its section of docs/benchmarks.md.
//
//   BENCH_ONLY=ordem pnpm bench          this section alone (`pnpm bench` runs it after the others)
//   npx tsx bench/delivery/ordered-per-entity.ts               the same
// BENCH_ORDEM_DIAG=1 also prints, every 2 s while a run drains, the deliveries concluded, the work
// queue's depth and the destinations' rows (isolation, circuit, pause).
import os from 'node:os';
import path from 'node:path';
import type { Broker } from '../../packages/broker/src';
import type { OutboxMessage } from '../../packages/outbox/src';
import type { TestHub } from '../../services/delivery-worker/src/delivery-worker.test-support';
import type { AlvoDaPublicacao } from '../../services/hub-api/src/features/publicacao/gravacao';
import { abrirDestinos, deleteVhost, freshVhost } from '../support/local-infra';
import { runSection } from '../support/report';

const TAXA = Number(process.env.BENCH_ORDEM_RATE ?? 2_000);
const DURACAO = Number(process.env.BENCH_ORDEM_DURATION ?? 10);
const ENTIDADES = 1_000;
const RECEPTORES = 4;
const ALVO = 0.8;
export const HEADING = '## Ordered delivery per entity: ordered beside unordered (issue 20)';
const VHOST = `hub-bench-ordem-${process.pid}`;
const DADOS = '{"pedido":"12345","valor":1999,"itens":[1,2,3]}';

interface Medida {
  modo: string;
  entregas: number;
  segundos: number;
  porSegundo: number;
  p50: number;
  p99: number;
  tentativas: number;
  recebidas: number;
  foraDeOrdem: number;
}

export async function ordem(log: (line: string) => void): Promise<string> {
  if (!freshVhost(VHOST)) throw new Error('rabbitmqctl is needed to make a virtual host for the benchmark');
  process.env.RABBITMQ_URL = `amqp://guest:guest@127.0.0.1:5672/${VHOST}`;
  const carga = os.loadavg()[0]!.toFixed(2);
  const medidas: Medida[] = [];
  try {
    for (const ordenada of [false, true]) medidas.push(await medir(ordenada, log));
  } finally {
    deleteVhost(VHOST);
  }
  const [livre, ordenado] = medidas as [Medida, Medida];
  const razao = ordenado.porSegundo / livre.porSegundo;
  log(`ordered ÷ unordered: ${razao.toFixed(2)}`);
  const linha = (m: Medida) =>
    `| ${m.modo} | ${m.entregas} | ${m.segundos.toFixed(1)} | ${Math.round(m.porSegundo)} | ${m.p50} | ${m.p99} | ${m.tentativas} | ${m.recebidas} | ${m.foraDeOrdem} |`;
  return [
    HEADING,
    '',
    `Measured ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC on ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, Node ${process.version}; load average ${carga} before the run (other sessions' work may run beside it).`,
    '',
    '```',
    'BENCH_ONLY=ordem pnpm bench',
    '```',
    '',
    `${TAXA} deliveries/s offered for ${DURACAO} s (events of ${ENTIDADES} entities, each to ${RECEPTORES} subscriptions on ${RECEPTORES} local receivers answering 200 at once, 50 POSTs at once per destination), published through hub-api's group commit and dispatcher, one worker process; unordered first, then the same subscriptions ordered (entrega_ordenada), each on a fresh hub. Throughput: deliveries ÷ seconds from the first publication to the last attempt's end. Latency: publication to the end of the successful attempt. Out of order: deliveries of an ordered entity that reached the receiver before one with a lower sequencia.`,
    '',
    '| subscriptions | deliveries | s first publication to last attempt | deliveries/s | p50 ms | p99 ms | attempts | POSTs received | out of order |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    linha(livre),
    linha(ordenado),
    '',
    `Ordered ÷ unordered throughput: **${razao.toFixed(2)}** (target ≥ ${ALVO}: ${razao >= ALVO ? '**met**' : '**not met**'}).`,
    '',
  ].join('\n');
}

async function medir(ordenada: boolean, log: (line: string) => void): Promise<Medida> {
  // After RABBITMQ_URL is set: the helpers read it when loaded.
  const { cenario, createTestHub } = await import('../../services/delivery-worker/src/delivery-worker.test-support');
  const { iniciarReceptor } = await import('../../services/delivery-worker/src/receptor.test-support');
  const { spawnService, waitFor } = await import('../../packages/testing/src');
  const { Broker } = await import('../../packages/broker/src');
  const { declareDeliveryTopology, deleteDeliveryTopology } = await import('../../packages/contracts/src');
  const { SqlPool } = await import('../../packages/database/src');
  const { createLogger } = await import('../../packages/log/src');
  const { montarGravacao } = await import('../../services/hub-api/src/features/publicacao/gravacao');
  const { gravadorEmGrupo } = await import('../../services/hub-api/src/features/publicacao/gravacao-em-grupo');
  const { despachanteDeTrabalhos } = await import('../../services/hub-api/src/features/publicacao/despacho');
  const { publicacaoRepository } = await import('../../services/hub-api/src/features/publicacao/publicacao.repository');
  const main = path.join(__dirname, '../../services/delivery-worker/src/main.ts');
  const modo = ordenada ? 'ordered' : 'unordered';

  const hub: TestHub = await createTestHub();
  // On this run's virtual host by name: under `pnpm bench`, bench/run.ts has loaded the test helpers
  // (whose broker URL is read once, at load) before RABBITMQ_URL was set, and their broker would
  // publish to another vhost than the worker's (whose jobs would then come only from its sweeper).
  const broker: Broker = await new Broker(process.env.RABBITMQ_URL!, createLogger('bench-ordem'), {
    name: 'bench-ordem',
  }).start();
  const receptores = await Promise.all(
    Array.from({ length: RECEPTORES }, () => iniciarReceptor({ '/ok': (_req, res) => res.writeHead(200).end() })),
  );
  const sql = new SqlPool(hub.database.url, 4);
  const logger = createLogger('bench-ordem');
  const despachante = despachanteDeTrabalhos({ broker, sql, logger });
  try {
    await broker.withChannel((ch) => declareDeliveryTopology(ch, [1_000], hub.topologia));
    const c = await cenario(hub);
    const urls = receptores.map((r) => r.url('/ok'));
    const assinaturas = await Promise.all(urls.map((url) => c.assinar(url, 3, { ordenada })));
    await abrirDestinos(hub.db, urls, 50);
    const alvo: AlvoDaPublicacao = {
      tipo: { id: c.ids.tipo, nome: c.nomeDoTipo, aplicativoId: c.ids.publicador, aplicativo: { nome: 'Publicador' } },
      versao: { versao: 1 },
      assinaturas: assinaturas.map((a) => ({
        id: a.id,
        aplicativoAssinanteId: c.ids.assinante,
        urlDeDestino: a.url,
        maximoDeTentativas: a.maximoDeTentativas,
        entregaOrdenada: ordenada,
        filtro: null,
        aplicativoAssinante: { nome: 'Assinante' },
      })),
    };
    // The jobs to this hub's own topology (a copy of the platform's names under a prefix).
    const gravador = gravadorEmGrupo(publicacaoRepository(hub.db, sql), (trabalhos: OutboxMessage[]) =>
      despachante.enviar(trabalhos.map((t) => ({ ...t, exchange: hub.topologia.entregas }))),
    );
    const worker = spawnService(main, {
      ...hub.env,
      DELIVERY_WORKER_PORT: '0',
      DELIVERY_RETRY_DELAYS: '1s',
      DELIVERY_CONCURRENCY_PER_DESTINATION: '50',
      // info: the line saying where it listens (a successful attempt is logged at debug only).
      LOG_LEVEL: 'info',
    });
    const url = await worker.url('delivery-worker', 60_000);
    await waitFor(async () => (await fetch(`${url}/saude/prontidao`)).status === 200, {
      timeoutMs: 30_000,
      what: 'the worker ready',
    });

    const eventos = Math.round((TAXA / RECEPTORES) * DURACAO);
    const total = eventos * RECEPTORES;
    log(`${modo}: ${eventos} events (${total} deliveries) at ${TAXA} deliveries/s`);
    const inicio = performance.now();
    const emVoo: Promise<boolean>[] = [];
    let enviados = 0;
    while (enviados < eventos) {
      const devidos = Math.min(eventos, Math.floor(((performance.now() - inicio) / 1000) * (TAXA / RECEPTORES)));
      for (; enviados < devidos; enviados += 1) {
        const gravacao = montarGravacao(alvo, {
          corpo: {
            tipo_de_evento_id: c.ids.tipo,
            versao_do_esquema: 1,
            entidade_id: `entidade-${enviados % ENTIDADES}`,
            dados: JSON.parse(DADOS),
          },
          dadosTexto: DADOS,
          publicadoPeloEmail: null,
          requestId: null,
          recebidoEm: new Date(),
        });
        emVoo.push(gravador.gravar(gravacao));
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const alimentado = performance.now() - inicio;
    const escritos = await Promise.all(emVoo);
    if (escritos.some((e) => !e)) throw new Error('a publication was not written');
    if (process.env.BENCH_ORDEM_DIAG)
      log(
        `fed in ${Math.round(alimentado)} ms, written in ${Math.round(performance.now() - inicio)} ms; outbox ${await hub.db.outbox.count()}; concluded ${await hub.db.entrega.count({ where: { situacao: 'concluida' } })}`,
      );
    const concluidas = () => hub.db.entrega.count({ where: { situacao: 'concluida' } });
    const amostra = process.env.BENCH_ORDEM_DIAG
      ? setInterval(async () => {
          const d = await hub.db.destino.findMany({ select: { isolamento: true, circuito: true, pausado: true } });
          const q = await broker.withChannel((ch) => ch.checkQueue(hub.topologia.filaDeEntregas));
          log(
            `t=${Math.round(performance.now() - inicio)} concluded=${await concluidas()} work=${q.messageCount}/${q.consumerCount} destinos=${JSON.stringify(d)}`,
          );
        }, 2000)
      : undefined;
    await waitFor(async () => ((await concluidas()) >= total ? true : undefined), {
      timeoutMs: 600_000,
      intervalMs: 100,
      what: `${total} deliveries concluded`,
    });
    clearInterval(amostra);
    const [janela] = await hub.db.$queryRaw<{ segundos: number; p50: number; p99: number }[]>`
      with fim as (
        select en.id, ev.recebido_em, t.iniciada_em + t.duracao_ms * interval '1 millisecond' as acabou
          from tentativa t join entrega en on en.id = t.entrega_id join evento ev on ev.id = en.evento_id
         where t.sucesso
      )
      select extract(epoch from max(acabou) - min(recebido_em))::float8 as segundos,
             percentile_cont(0.5) within group (order by extract(epoch from acabou - recebido_em) * 1000)::float8 as p50,
             percentile_cont(0.99) within group (order by extract(epoch from acabou - recebido_em) * 1000)::float8 as p99
        from fim`;
    // Per subscription and entity, the sequencia of each POST in the order received: any drop is out of order.
    let foraDeOrdem = 0;
    if (ordenada)
      for (const r of receptores) {
        const ultima = new Map<string, number>();
        for (const recebido of r.recebidos) {
          const corpo = JSON.parse(recebido.corpo) as { assinatura_id: string; entidade_id: string; sequencia: number };
          const chave = `${corpo.assinatura_id}:${corpo.entidade_id}`;
          if (corpo.sequencia < (ultima.get(chave) ?? 0)) foraDeOrdem += 1;
          ultima.set(chave, Math.max(corpo.sequencia, ultima.get(chave) ?? 0));
        }
      }
    const medida: Medida = {
      modo,
      entregas: total,
      segundos: janela!.segundos,
      porSegundo: total / janela!.segundos,
      p50: Math.round(janela!.p50),
      p99: Math.round(janela!.p99),
      tentativas: await hub.db.tentativa.count(),
      recebidas: receptores.reduce((n, r) => n + r.recebidos.length, 0),
      foraDeOrdem,
    };
    log(JSON.stringify(medida));
    await worker.stop();
    return medida;
  } finally {
    await despachante.parar();
    await sql.fechar();
    await broker.withChannel((ch) => deleteDeliveryTopology(ch, hub.topologia)).catch(() => undefined);
    await broker.close();
    await Promise.all(receptores.map((r) => r.fechar()));
    await hub.close();
  }
}

if (require.main === module) runSection(ordem, HEADING);
