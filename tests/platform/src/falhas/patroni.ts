import { type PrivatePatroni, startPrivatePatroni } from '@hub/testing';
import pg from 'pg';
import { montarPalco, type Palco } from '../e2e/palco';
import { armazenados } from './armazenamento';
import { conferir, conferirRegistros, type Numeros } from './conferencia';
import { type Cenario, prepararPublicacao, type Resultado, rajadaComFalha } from './ensaio';
import { type Leitura, leiturasIndevidas, lerPainelDurante } from './leituras';
import { ENTREGADOR_RAPIDO } from './ritmo';

/**
 * The Patroni scenarios' stage: the platform unchanged in shape on a PostgreSQL cluster that fails
 * over (startPrivatePatroni), every service's database URL on HAProxy's read-write port, and the
 * burst of the other fault scenarios with the fault in its middle: 3,000 publications at 100/s by
 * default (FALHAS_PATRONI_EVENTOS sends more or fewer), two subscriptions per event.
 */
const eventos = Number(process.env.FALHAS_PATRONI_EVENTOS ?? 3_000);
export const RITMO_PATRONI = { eventos, porSegundo: 100, falhaApos: Math.floor(eventos / 2) };

export interface PalcoPatroni {
  cluster: PrivatePatroni;
  palco: Palco;
}

export async function montarPalcoPatroni(): Promise<PalcoPatroni> {
  const cluster = await startPrivatePatroni();
  try {
    const palco = await montarPalco({
      postgresUrl: cluster.url,
      postgresReadUrl: cluster.readUrl,
      env: { 'delivery-worker': ENTREGADOR_RAPIDO },
    });
    // The stage's own connection to hub-api's database dies with the primary; it is not what is tested.
    palco.db.on('error', () => undefined);
    return { cluster, palco };
  } catch (error) {
    await cluster.close();
    throw error;
  }
}

export async function desmontarPalcoPatroni(p: PalcoPatroni | undefined): Promise<void> {
  await p?.palco.encerrar().catch(() => undefined);
  await p?.cluster.close();
}

/**
 * The burst with `falha` in it, then every check of the fault suite: every event answered 2xx
 * delivered to both subscriptions (copies only with the same webhook-id), every refusal problem+json
 * 503/429 with Retry-After, every service the same process and ready, and in the database every
 * accepted event stored once with the deliveries its answer listed, each concluded with one
 * successful attempt, and no event beyond them (a commit whose answer was lost and was sent again
 * is answered from its Idempotency-Key, never written twice).
 */
export async function ensaioNoCluster(
  { palco }: PalcoPatroni,
  nome: string,
  falha: Cenario['falha'],
): Promise<{ resultado: Resultado; numeros: Numeros; leituras: Leitura[] }> {
  const { platform, assinante } = palco;
  const publicacao = await prepararPublicacao(platform, assinante, nome);
  const operador = await platform.userToken(`operador.${nome}@empresa.com.br`, { master: true });
  const painel = lerPainelDurante(platform, operador);
  const resultado = await rajadaComFalha({ platform, assinante, ...RITMO_PATRONI, falha }, publicacao);
  const leituras = await painel.parar();
  expect(leiturasIndevidas(leituras)).toEqual([]);
  const numeros = await conferir(nome, platform, assinante, resultado, { porSegundo: RITMO_PATRONI.porSegundo });
  await conferirRegistros(platform);
  const db = new pg.Client({ connectionString: platform.databases['hub-api'] });
  await db.connect();
  try {
    await armazenados(db, resultado.aceitos);
  } finally {
    await db.end();
  }
  expect(resultado.aceitos.size).toBe(RITMO_PATRONI.eventos);
  return { resultado, numeros, leituras };
}

/** Every refusal, by "status codigo" (all problem+json 503 with Retry-After, conferir checked). */
export const recusasPorTipo = (resultado: Resultado) =>
  resultado.recusas.reduce<Record<string, number>>((porTipo, r) => {
    porTipo[`${r.status} ${r.codigo}`] = (porTipo[`${r.status} ${r.codigo}`] ?? 0) + 1;
    return porTipo;
  }, {});
