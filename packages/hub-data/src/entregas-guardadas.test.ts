import { uuidv7 } from '@hub/database';
import type { Db } from './index';
import { bancoAntesDaMigracao, registroMinimo } from './migracoes.test-support';

// Migration 023 on a database that already holds deliveries: it counts them, per hour of criada_em,
// into resumo_por_hora.entregas_guardadas, and from then on entrega's triggers keep the count. The
// database is migrated up to 022 from a copy of those files, written to, then migrated to the end.
let banco: Awaited<ReturnType<typeof bancoAntesDaMigracao>>;
let db: Db;
let aplicativoId: string;
let tipoId: string;
let assinaturaId: string;

beforeAll(async () => {
  banco = await bancoAntesDaMigracao('hub_entregas_guardadas', 23);
  db = banco.db;
  const registro = await registroMinimo(db, ['https://r.example/h']);
  ({ aplicativoId, tipoId } = registro);
  assinaturaId = registro.assinaturas[0]!;
});
afterAll(() => banco?.fechar());

/** An event received at `instante` and `quantas` deliveries of it, written in one statement each. */
async function entregas(instante: string, quantas: number) {
  const evento = uuidv7();
  await db.$executeRaw`insert into evento (id, tipo_de_evento_id, versao_do_esquema, aplicativo_publicador_id,
      entidade_id, ocorrido_em, recebido_em, dados)
    values (${evento}::uuid, ${tipoId}::uuid, 1, ${aplicativoId}::uuid, 'p-1', ${instante}::timestamptz,
            ${instante}::timestamptz, '{}')`;
  await db.$executeRaw`insert into entrega (id, evento_id, evento_recebido_em, entidade_id, assinatura_id,
      aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, situacao, maximo_de_tentativas,
      proxima_tentativa_em, criada_em, atualizada_em)
    select gen_random_uuid(), ${evento}::uuid, ${instante}::timestamptz, 'p-1', ${assinaturaId}::uuid,
           ${aplicativoId}::uuid, ${tipoId}::uuid, 1, 'https://r.example/h', 'concluida', 3, ${instante}::timestamptz,
           ${instante}::timestamptz, ${instante}::timestamptz
      from generate_series(1, ${quantas}::int)`;
  return evento;
}

/** Per hour: the deliveries in entrega, and the sum of the hour's slices. */
async function porHora() {
  const [real, fatias] = await Promise.all([
    db.$queryRaw<{ hora: Date; n: number }[]>`
      select date_trunc('hour', criada_em, 'UTC') as hora, count(*)::int as n from entrega group by 1 order by 1`,
    db.$queryRaw<{ hora: Date; n: number }[]>`
      select hora, sum(entregas_guardadas)::int as n from resumo_por_hora group by hora
      having sum(entregas_guardadas) <> 0 order by hora`,
  ]);
  return { real, fatias };
}

test('When migration 023 runs over stored deliveries, then it counts them per hour, and the triggers count every later write', async () => {
  await entregas('2041-07-01T10:15:00.000Z', 3);
  await entregas('2041-07-01T10:59:59.999Z', 2);
  const apagado = await entregas('2041-07-01T11:00:00.000Z', 4);
  await entregas('2041-06-30T23:00:00.000Z', 1);

  expect(await banco.migrarAteOFim()).toBeGreaterThanOrEqual(1);

  const depois = await porHora();
  expect(depois.real.map((h) => h.n)).toEqual([1, 5, 4]);
  expect(depois.fatias).toEqual(depois.real);

  await entregas('2041-07-01T11:30:00.000Z', 2);
  await db.$executeRaw`delete from evento where id = ${apagado}::uuid`;
  await db.$executeRaw`delete from entrega where criada_em < '2041-07-01T00:00:00Z'`;
  const fim = await porHora();
  expect(fim.real.map((h) => h.n)).toEqual([5, 2]);
  expect(fim.fatias).toEqual(fim.real);
});
