import { uuidv7 } from '@hub/database';
import type { Db } from './index';
import { bancoAntesDaMigracao, registroMinimo } from './migracoes.test-support';

// Migration 024 on a database that already holds attempts: it counts them, per hour of iniciada_em,
// into resumo_por_hora.tentativas_guardadas (and those with sucesso into
// tentativas_com_sucesso_guardadas), and from then on tentativa's triggers keep the counts. The
// database is migrated up to 023 from a copy of those files, written to, then migrated to the end.
let banco: Awaited<ReturnType<typeof bancoAntesDaMigracao>>;
let db: Db;
let aplicativoId: string;
let tipoId: string;
let assinaturaId: string;

beforeAll(async () => {
  banco = await bancoAntesDaMigracao('hub_tentativas_guardadas', 24);
  db = banco.db;
  const registro = await registroMinimo(db, ['https://r.example/h']);
  ({ aplicativoId, tipoId } = registro);
  assinaturaId = registro.assinaturas[0]!;
});
afterAll(() => banco?.fechar());

/**
 * An event received at `instante`, one delivery of it, and its attempts in one statement, started
 * `minutos` after the event; the last one succeeded when `sucesso`. Gives the event's id.
 */
async function tentativas(instante: string, minutos: number[], sucesso = true) {
  const evento = uuidv7();
  const entrega = uuidv7();
  await db.$executeRaw`insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id,
      entidade_id, ocorrido_em, recebido_em, dados)
    values (${evento}::uuid, ${tipoId}::uuid, 1, ${aplicativoId}::uuid, 'p-1', ${instante}::timestamptz,
            ${instante}::timestamptz, '{}')`;
  await db.$executeRaw`insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id,
      aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, situacao, maximo_de_tentativas,
      proxima_tentativa_em, criada_em, atualizada_em)
    values (${entrega}::uuid, ${evento}::uuid, ${instante}::timestamptz, 'p-1', ${assinaturaId}::uuid,
            ${aplicativoId}::uuid, ${tipoId}::uuid, 1, 'https://r.example/h', 'concluida', 3, ${instante}::timestamptz,
            ${instante}::timestamptz, ${instante}::timestamptz)`;
  await db.$executeRaw`insert into tentativa (id, entrega_id, numero, iniciada_em, duracao_ms, status_http, sucesso)
    select gen_random_uuid(), ${entrega}::uuid, numero, ${instante}::timestamptz + m * interval '1 minute', 10,
           500, ${sucesso} and numero = ${minutos.length}::int
      from unnest(${minutos}::int[]) with ordinality as a(m, numero)`;
  return evento;
}

/** Per hour: the attempts in tentativa (all, successful), and the sums of the hour's slices. */
async function porHora() {
  const [real, fatias] = await Promise.all([
    db.$queryRaw<{ hora: Date; n: number; s: number }[]>`
      select date_trunc('hour', iniciada_em, 'UTC') as hora, count(*)::int as n, count(*) filter (where sucesso)::int as s
        from tentativa group by 1 order by 1`,
    db.$queryRaw<{ hora: Date; n: number; s: number }[]>`
      select hora, sum(tentativas_guardadas)::int as n, sum(tentativas_com_sucesso_guardadas)::int as s
        from resumo_por_hora group by hora
      having sum(tentativas_guardadas) <> 0 or sum(tentativas_com_sucesso_guardadas) <> 0 order by hora`,
  ]);
  return { real, fatias };
}

test('When migration 024 runs over stored attempts, then it counts them per hour, and the triggers count every later write', async () => {
  await tentativas('2041-07-01T10:15:00.000Z', [0, 1, 50]);
  await tentativas('2041-07-01T10:59:59.999Z', [0], false);
  const apagado = await tentativas('2041-07-01T11:00:00.000Z', [0, 1, 2, 3]);
  await tentativas('2041-06-30T23:00:00.000Z', [0]);

  expect(await banco.migrarAteOFim()).toBeGreaterThanOrEqual(1);

  const depois = await porHora();
  expect(depois.real.map((h) => [h.n, h.s])).toEqual([
    [1, 1],
    [3, 0],
    [5, 2],
  ]);
  expect(depois.fatias).toEqual(depois.real);

  await tentativas('2041-07-01T11:30:00.000Z', [0, 40]);
  await db.$executeRaw`delete from evento where id = ${apagado}::uuid`;
  await db.$executeRaw`delete from tentativa where iniciada_em < '2041-07-01T00:00:00Z'`;
  const fim = await porHora();
  expect(fim.real.map((h) => [h.n, h.s])).toEqual([
    [3, 0],
    [2, 1],
    [1, 1],
  ]);
  expect(fim.fatias).toEqual(fim.real);
});
