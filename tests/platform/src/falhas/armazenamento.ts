import type pg from 'pg';
import { waitFor } from '@hub/testing';
import { CAMINHOS } from './ensaio';

/**
 * Stored as answered: each accepted event with the deliveries its 201 listed, each concluded with
 * exactly one successful attempt (a copy on the wire is recorded once).
 */
export async function armazenados(db: pg.Client, aceitos: Map<string, string[]>) {
  const ids = [...aceitos.keys()];
  const fora = async () =>
    (
      await db.query<{ n: number }>(
        `select count(*)::int as n from entrega where evento_id = any($1::uuid[]) and situacao <> 'concluida'`,
        [ids],
      )
    ).rows[0]!.n;
  await waitFor(async () => (await fora()) === 0, { timeoutMs: 60_000, what: 'every delivery concluded' }).catch(
    () => undefined,
  );
  const { rows } = await db.query<{ id: string; evento_id: string; situacao: string; sucessos: number }>(
    `select e.id, e.evento_id, e.situacao,
            (select count(*)::int from tentativa t where t.entrega_id = e.id and t.sucesso) as sucessos
       from entrega e where e.evento_id = any($1::uuid[])`,
    [ids],
  );
  const guardadas = new Map(rows.map((r) => [r.id, r]));
  const eventos = new Set(
    (await db.query<{ id: string }>('select id from evento where id = any($1::uuid[])', [ids])).rows.map((r) => r.id),
  );
  // An event the publisher was not told of (a commit whose answer was lost, sent again and written
  // again instead of answered from its Idempotency-Key) is a row beyond the accepted ones.
  const todos = (
    await db.query<{ n: number }>(
      `select count(*)::int as n from evento
        where tipo_de_evento_id in (select tipo_de_evento_id from evento where id = any($1::uuid[]))`,
      [ids],
    )
  ).rows[0]!.n;
  const esperadas = [...aceitos].flatMap(([evento, entregas]) => entregas.map((id) => ({ evento, id })));
  expect({
    eventosSemRegistro: ids.filter((id) => !eventos.has(id)).slice(0, 3),
    eventosAMais: todos - ids.length,
    entregasSemRegistro: esperadas.filter((e) => !guardadas.get(e.id)).slice(0, 3),
    entregasDeOutroEvento: esperadas.filter((e) => guardadas.get(e.id) && guardadas.get(e.id)!.evento_id !== e.evento),
    entregasAMais: rows.length - esperadas.length,
    naoConcluidasUmaVez: rows
      .filter((r) => r.situacao !== 'concluida' || r.sucessos !== 1)
      .map((r) => `${r.id} ${r.situacao} ${r.sucessos}`)
      .slice(0, 5),
  }).toEqual({
    eventosSemRegistro: [],
    eventosAMais: 0,
    entregasSemRegistro: [],
    entregasDeOutroEvento: [],
    entregasAMais: 0,
    naoConcluidasUmaVez: [],
  });
  expect(aceitos.size * CAMINHOS.length).toBe(esperadas.length);
}
