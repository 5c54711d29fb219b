import type http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { publishMessage } from '@hub/broker';
import {
  corposDaEntrega,
  type DeliveryTopology,
  deleteDeliveryTopology,
  isolatedDeliveryTopology,
  type TrabalhoDeEntrega,
  trabalhoDeEntrega,
} from '@hub/contracts';
import { uuidv7 } from '@hub/database';
import { createDb, type Db, HUB_DATA_MIGRATIONS_DIR } from '@hub/hub-data';
import { createLogger } from '@hub/log';
import { generateKey, type KeySet, publicJwks, writeKeyFile } from '@hub/signing';
import { connectTestBroker, createTestDatabase, type TestDatabase, uniqueName } from '@hub/testing';
import { deliveryWorkerConfig } from './config';
import { type RunningDeliveryWorker, type StartOptions, startDeliveryWorker } from './start';

/**
 * What the worker's tests (and fault tests, benchmarks) share: a fresh hub_events database, a key
 * file, and a delivery topology of their own (no other test's worker takes their jobs).
 */
export interface TestHub {
  database: TestDatabase;
  db: Db;
  keysFile: string;
  keySet: KeySet;
  jwks: ReturnType<typeof publicJwks>;
  topologia: DeliveryTopology;
  /** Env of a worker on this hub (to merge into the config, or to spawn main.ts). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** `adminUrl`: another PostgreSQL server than the shared test one (a private one a test restarts). */
export async function createTestHub(adminUrl?: string): Promise<TestHub> {
  const database = await createTestDatabase('hub', HUB_DATA_MIGRATIONS_DIR, adminUrl);
  const dir = await mkdtemp(path.join(tmpdir(), 'delivery-worker-keys-'));
  const keysFile = path.join(dir, 'signing-keys.json');
  const keySet: KeySet = { keys: [generateKey()] };
  await writeKeyFile(keysFile, keySet);
  const prefixo = uniqueName('teste');
  const db = createDb(database.url, 4);
  return {
    database,
    db,
    keysFile,
    keySet,
    jwks: publicJwks(keySet),
    topologia: isolatedDeliveryTopology(prefixo),
    env: {
      HUB_AMBIENTE: 'LOCALHOST',
      HUB_DATABASE_URL: database.url,
      HUB_SIGNING_KEYS_FILE: keysFile,
      HUB_SIGNING_KEYS_RELOAD: '0ms',
      DELIVERY_WORKER_TOPOLOGY_PREFIX: prefixo,
    },
    close: async () => {
      await db.$disconnect();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface TestDeliveryWorker extends RunningDeliveryWorker {
  close(): Promise<void>;
}

/** The real worker on a free port, on a test hub, with short retry delays unless told otherwise. */
export async function startDeliveryWorkerForTests(
  hub: TestHub,
  env: Record<string, string> = {},
  start: Omit<StartOptions, 'port' | 'topologia'> = {},
): Promise<TestDeliveryWorker> {
  const config = deliveryWorkerConfig.parse({
    RABBITMQ_URL: process.env.RABBITMQ_URL,
    DELIVERY_RETRY_DELAYS: '20ms,40ms',
    DELIVERY_TIMEOUT: '2s',
    DELIVERY_STOP_TIMEOUT: '2s',
    ...hub.env,
    ...env,
  });
  const running = await startDeliveryWorker(config, createLogger('delivery-worker'), {
    varredura: false,
    ...start,
    topologia: hub.topologia,
    port: 0,
  });
  return { ...running, close: () => running.stop() };
}

/**
 * Deletes the hub's isolated topology (after every worker on it stopped), the queues its
 * destinations may have had of their own included, on a connection of its own.
 */
export async function deleteTestTopology(hub: TestHub): Promise<void> {
  const broker = await connectTestBroker('delivery-worker-teardown');
  try {
    const destinos = (await hub.db.destino.findMany({ select: { id: true } })).map((d) => d.id);
    await broker.withChannel((ch) => deleteDeliveryTopology(ch, hub.topologia, destinos));
  } finally {
    await broker.close();
  }
}

export interface Assinatura {
  id: string;
  url: string;
  maximoDeTentativas: number;
  /** Ordered delivery per entity (entrega_ordenada). */
  ordenada?: boolean;
}

/** The shapes of a delivery (assinatura.formato). */
export type Formato = 'standard-webhooks' | 'cloudevents';

/**
 * Registry rows for deliveries: a publisher and a subscriber application, an event type and its
 * version. `assinar` adds a subscription, `entregar` an event with one delivery per subscription and
 * their jobs published to the work queue, as publication does.
 */
export async function cenario(hub: TestHub) {
  const agora = new Date();
  const publicador = uuidv7();
  const assinante = uuidv7();
  const tipo = uuidv7();
  const nomeDoTipo = `teste.${uniqueName('t').replace(/[^a-z0-9]/g, '_')}`;
  const base = { criadoEm: agora, atualizadoEm: agora };
  await hub.db.aplicativo.createMany({
    data: [
      { id: publicador, nome: 'Publicador', clientId: uniqueName('pub'), ativo: true, ...base },
      { id: assinante, nome: 'Assinante', clientId: uniqueName('ass'), ativo: true, ...base },
    ],
  });
  await hub.db.tipoDeEvento.create({
    data: { id: tipo, nome: nomeDoTipo, aplicativoId: publicador, ativo: true, retencaoEmDias: 7, ...base },
  });
  await hub.db.versaoDeEsquema.create({
    data: { id: uuidv7(), tipoDeEventoId: tipo, versao: 1, esquema: { type: 'object' }, ativa: true, ...base },
  });

  return {
    nomeDoTipo,
    /** The rows' ids (a benchmark publishes through publication's own statement with them). */
    ids: { publicador, assinante, tipo },
    /** Publishes a job again (a redelivery, a duplicate on the wire). */
    republicar: (t: TrabalhoDeEntrega, broker: RunningDeliveryWorker['broker']) =>
      publishMessage(broker, { ...trabalhoDeEntrega, exchange: hub.topologia.entregas }, t, {
        messageId: t.entrega_id,
        mandatory: true,
      }),
    async assinar(
      url: string,
      maximoDeTentativas = 3,
      opcoes: { ordenada?: boolean; formato?: Formato } = {},
    ): Promise<Assinatura> {
      const id = uuidv7();
      const ordenada = opcoes.ordenada ?? false;
      await hub.db.assinatura.create({
        data: {
          id,
          aplicativoAssinanteId: assinante,
          tipoDeEventoId: tipo,
          versaoDoEsquema: 1,
          urlDeDestino: url,
          maximoDeTentativas,
          ativa: true,
          entregaOrdenada: ordenada,
          formato: opcoes.formato ?? 'standard-webhooks',
          ...base,
        },
      });
      return { id, url, maximoDeTentativas, ordenada };
    },

    /**
     * An event with dados (JSON text, stored verbatim) and one delivery per subscription; their
     * jobs are published unless `publicar` is false. Gives the jobs.
     */
    async entregar(
      assinaturas: Assinatura[],
      opcoes: {
        dados?: string;
        publicar?: boolean;
        broker?: RunningDeliveryWorker['broker'];
        /** The publication's request id the jobs carry (null unless given). */
        requestId?: string;
        /** The event's entidade_id (a new one unless given). */
        entidade?: string;
      } = {},
    ): Promise<TrabalhoDeEntrega[]> {
      const recebidoEm = new Date();
      const eventoId = uuidv7(recebidoEm.getTime());
      const dados = opcoes.dados ?? '{"valor": 12345678901234567890, "nome": "Ação"}';
      const entidade = opcoes.entidade ?? uniqueName('entidade');
      const corpoPara = corposDaEntrega(
        {
          evento_id: eventoId,
          tipo: nomeDoTipo,
          versao_do_esquema: 1,
          entidade_id: entidade,
          ocorrido_em: recebidoEm,
          recebido_em: recebidoEm,
          aplicativo_publicador_id: publicador,
        },
        dados,
      );
      // As publication's statement does (docs/decisions/ordered-delivery-per-entity.md), in one
      // transaction: an ordered subscription's delivery takes the next sequencia of its entity from
      // the chain's row (locked until the commit), and waits unless it is the chain's turn. Tests hand
      // in hundreds at once, which queue for the client's few connections longer than Prisma's 2 s
      // default wait (CI failed with "Unable to start a transaction in the given time"): a minute.
      const { trabalhos, esperando } = await hub.db.$transaction(
        async (tx) => {
          await tx.$executeRaw`
          insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id, entidade_id,
                              ocorrido_em, recebido_em, dados)
          values (${eventoId}::uuid, ${tipo}::uuid, 1, ${publicador}::uuid, ${entidade}, ${recebidoEm}, ${recebidoEm},
                  ${dados}::json)`;
          const lugares = new Map<string, { sequencia: number; emEspera: boolean }>();
          for (const a of assinaturas.filter((a) => a.ordenada)) {
            const [cadeia] = await tx.$queryRaw<{ ultima: bigint; pronta: bigint }[]>`
            insert into sequencia_de_entidade as s (assinatura_id, entidade_id, ultima, pronta)
            values (${a.id}::uuid, ${entidade}, 1, 1)
            on conflict (assinatura_id, entidade_id) do update set ultima = s.ultima + 1
            returning s.ultima, s.pronta`;
            lugares.set(a.id, { sequencia: Number(cadeia!.ultima), emEspera: cadeia!.ultima !== cadeia!.pronta });
          }
          const trabalhos = assinaturas.map((a) => ({
            entrega_id: uuidv7(recebidoEm.getTime()),
            evento_id: eventoId,
            assinatura_id: a.id,
            url_de_destino: a.url,
            corpo: corpoPara(a.id, lugares.get(a.id)?.sequencia),
            request_id: opcoes.requestId ?? null,
          }));
          await tx.entrega.createMany({
            data: trabalhos.map((t, i) => ({
              id: t.entrega_id,
              eventoId,
              eventoRecebidoEm: recebidoEm,
              entidadeId: entidade,
              assinaturaId: t.assinatura_id,
              aplicativoAssinanteId: assinante,
              tipoDeEventoId: tipo,
              versaoDoEsquema: 1,
              urlDeDestino: t.url_de_destino,
              situacao: 'pendente',
              maximoDeTentativas: assinaturas[i]!.maximoDeTentativas,
              proximaTentativaEm: recebidoEm,
              criadaEm: recebidoEm,
              atualizadaEm: recebidoEm,
              ...(lugares.has(t.assinatura_id)
                ? {
                    sequencia: BigInt(lugares.get(t.assinatura_id)!.sequencia),
                    emEspera: lugares.get(t.assinatura_id)!.emEspera,
                  }
                : {}),
            })),
          });
          const esperando = new Set(
            trabalhos.filter((t) => lugares.get(t.assinatura_id)?.emEspera).map((t) => t.entrega_id),
          );
          return { trabalhos, esperando };
        },
        { maxWait: 60_000, timeout: 60_000 },
      );
      if (opcoes.publicar !== false && opcoes.broker) {
        const broker = opcoes.broker;
        // A waiting delivery's job is not published: whoever finishes the one before it sends it.
        await Promise.all(
          trabalhos
            .filter((t) => !esperando.has(t.entrega_id))
            .map((t) =>
              publishMessage(broker, { ...trabalhoDeEntrega, exchange: hub.topologia.entregas }, t, {
                messageId: t.entrega_id,
                mandatory: true,
              }),
            ),
        );
      }
      return trabalhos;
    },
  };
}

/**
 * Answers 200, as they arrive, the requests a receiver holds in `presos` until `ate` resolves, and
 * gives the most requests it ever had open at once (what a concurrency limit must bound).
 */
export async function soltarContando(
  receptor: { abertos(): number },
  presos: http.ServerResponse[],
  ate: () => Promise<unknown>,
): Promise<number> {
  let maximo = 0;
  const soltar = setInterval(() => {
    maximo = Math.max(maximo, receptor.abertos());
    for (const res of presos.splice(0)) res.writeHead(200).end();
  }, 5);
  try {
    await ate();
  } finally {
    clearInterval(soltar);
  }
  return maximo;
}
