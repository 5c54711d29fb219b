import http from 'node:http';
import { type PrivatePostgres, startPrivatePostgres, waitFor } from '@hub/testing';
import pg from 'pg';
import { montarPalco, type Palco } from '../e2e/palco';
import { conferir } from './conferencia';
import { armazenados } from './armazenamento';
import { prepararPublicacao, rajadaComFalha } from './ensaio';
import { ENTREGADOR_RAPIDO, RITMO } from './ritmo';

/**
 * Issue 18's scenario (a) as a crash instead of a clean stop: PostgreSQL killed -9 (its postmaster,
 * no shutdown), down for 3 s and started again (crash recovery), then restarted in immediate mode,
 * while publications arrive through the gateway. The subscriptions are unordered, so every batch
 * goes by the group write without ordered steps, on node:http's fast path of hub-api, its delivery
 * jobs published with AMQP frames grouped. Beyond the drill's checks: every accepted event is
 * stored with its deliveries, each concluded with one successful attempt, and hub-api gave back
 * every admission slot (HUB_PUBLICACOES_EM_ANDAMENTO) its refused and failed publications took.
 */
const FORA_MS = 3_000;
const VAGAS = 40;
let postgres: PrivatePostgres;
let palco: Palco;

beforeAll(async () => {
  postgres = await startPrivatePostgres();
  palco = await montarPalco({
    postgresUrl: postgres.url,
    env: {
      'delivery-worker': ENTREGADOR_RAPIDO,
      'hub-api': { HUB_PUBLICACOES_EM_ANDAMENTO: String(VAGAS) },
    },
  });
  palco.db.on('error', () => undefined);
}, 180_000);

afterAll(async () => {
  await palco?.encerrar();
  await postgres?.close();
}, 120_000);

const espera = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('When PostgreSQL is killed -9 and then restarted immediately during a burst of publications, then refusals are 503 with Retry-After, every accepted event is stored with its deliveries concluded once, no admission slot is left taken and every service is the same process', async () => {
  const { platform, assinante } = palco;
  const publicacao = await prepararPublicacao(platform, assinante, 'queda');
  const resultado = await rajadaComFalha(
    {
      platform,
      assinante,
      ...RITMO,
      falha: async () => {
        await postgres.stop('kill');
        await espera(FORA_MS);
        await postgres.start();
        await espera(1_000);
        await postgres.restart('immediate');
      },
    },
    publicacao,
  );
  await conferir('PostgreSQL killed', platform, assinante, resultado, { porSegundo: RITMO.porSegundo });

  // The stage's own connection died with PostgreSQL: a new one.
  const db = new pg.Client({ connectionString: palco.platform.databases['hub-api'] });
  await db.connect();
  try {
    await armazenados(db, resultado.aceitos);
  } finally {
    await db.end();
  }

  await semVagaPresa(platform.enderecos('hub-api')[0]!, publicacao);
}, 300_000);

/**
 * Every admission slot free again: VAGAS publications held open on hub-api itself (headers sent,
 * body withheld, so each holds its slot while its body is awaited), until one more is refused
 * sobrecarregado (all slots taken); then their bodies go and each must be accepted. A slot a
 * publication kept during the crash would leave one of them refused sobrecarregado instead.
 */
async function semVagaPresa(hubApi: string, publicacao: { tipoId: string; token: string }) {
  const url = new URL(hubApi);
  const corpo = (n: number) =>
    Buffer.from(
      JSON.stringify({
        tipo_de_evento_id: publicacao.tipoId,
        versao_do_esquema: 1,
        entidade_id: `vaga-${n}`,
        dados: { n },
      }),
    );
  const abrir = (n: number) => {
    const body = corpo(n);
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: '/eventos',
      agent: false,
      headers: {
        authorization: `Bearer ${publicacao.token}`,
        'content-type': 'application/json',
        'content-length': body.length,
        'idempotency-key': `vaga-${n}`,
      },
    });
    const resposta = new Promise<string>((resolve) => {
      req.on('response', (res) => {
        const partes: Buffer[] = [];
        res.on('data', (p: Buffer) => partes.push(p));
        res.on('end', () => resolve(`${res.statusCode} ${codigoDe(Buffer.concat(partes).toString('utf8'))}`));
      });
      req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    req.flushHeaders();
    return { enviar: () => req.end(body), resposta };
  };
  const abertas = Array.from({ length: VAGAS }, (_, n) => abrir(n));
  await waitFor(
    async () => {
      const mais = abrir(VAGAS + 1);
      mais.enviar();
      return (await mais.resposta) === '503 sobrecarregado';
    },
    { timeoutMs: 30_000, intervalMs: 200, what: 'every slot taken by the held publications' },
  );
  for (const a of abertas) a.enviar();
  const respostas = await Promise.all(abertas.map((a) => a.resposta));
  expect(respostas.filter((r) => r !== '201 -')).toEqual([]);
}

function codigoDe(texto: string): string {
  try {
    return String((JSON.parse(texto) as { codigo?: unknown }).codigo ?? '-');
  } catch {
    return texto.slice(0, 80);
  }
}
