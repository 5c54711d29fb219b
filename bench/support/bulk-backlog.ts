// A backlog of one subscription's deliveries for bench/delivery/noisy-destination-isolation.ts, written in
// bulk: publishing 100,000 events through POST /eventos takes minutes on this machine, so they are written
// straight into hub_events by publication's own statement (hub-api's SQL_DA_GRAVACAO, a few hundred events per
// statement): each event with its one delivery (pendente), the shapes POST /eventos writes, and its
// job in the outbox, where publication puts a job the broker did not confirm. The platform's outbox
// relay then publishes the jobs to the work queue (to the destination's own queue when it has one).
// Gives when it is all in RabbitMQ (no outbox row left unpublished). Then, on a server whose autovacuum
// is off (this machine's PostgreSQL runs with `autovacuum = off`, its CI configuration), the database
// is vacuumed and analyzed once, as autovacuum would do within its naptime on a production server:
// otherwise the phases that follow measure tables that never lose a dead row or learn their new size.
import { pgClient } from './databases';
import { corposDaEntrega, trabalhoDeEntrega } from '../../packages/contracts/src';
import { SqlPool, uuidv7 } from '../../packages/database/src';
import { outboxInsert } from '../../packages/outbox/src';
import { mensagemDoTrabalho } from '../../services/hub-api/src/features/entregas/trabalho';
import type { Gravacao } from '../../services/hub-api/src/features/publicacao/gravacao';
import { SQL_DA_GRAVACAO, valoresDaGravacao } from '../../services/hub-api/src/features/publicacao/publicacao.sql';

/** The subscription the backlog is for, as GET /assinatura/{id} and its type's owner say. */
export interface Destinatario {
  assinaturaId: string;
  aplicativoAssinanteId: string;
  urlDeDestino: string;
  maximoDeTentativas: number;
  tipoDeEventoId: string;
  tipoNome: string;
  aplicativoPublicadorId: string;
}

/** Events per statement (publication's group commit writes at most 200; larger is fewer round trips). */
const POR_COMANDO = 500;
/** Statements in flight at once, as publication's writer. */
const PARALELOS = 2;
/** Publication's statement name: the text prepared under it is the same. */
const COMANDO = 'publicacao_gravar';

/** One event of the backlog, as publication would write it (publicacao.service.ts, `publicar`). */
function gravacao(d: Destinatario, entidadeId: string, dadosTexto: string): Gravacao {
  const recebidoEm = new Date();
  const eventoId = uuidv7(recebidoEm.getTime());
  const entregaId = uuidv7(recebidoEm.getTime());
  const corpo = corposDaEntrega(
    {
      evento_id: eventoId,
      tipo: d.tipoNome,
      versao_do_esquema: 1,
      entidade_id: entidadeId,
      ocorrido_em: recebidoEm,
      recebido_em: recebidoEm,
      aplicativo_publicador_id: d.aplicativoPublicadorId,
    },
    dadosTexto,
  )(d.assinaturaId);
  return {
    evento: {
      id: eventoId,
      tipoDeEventoId: d.tipoDeEventoId,
      versaoDoEsquema: 1,
      aplicativoPublicadorId: d.aplicativoPublicadorId,
      entidadeId,
      ocorridoEm: recebidoEm,
      recebidoEm,
      publicadoPeloEmail: null,
      dadosTexto,
    },
    entregas: [
      {
        id: entregaId,
        eventoId,
        eventoRecebidoEm: recebidoEm,
        entidadeId,
        assinaturaId: d.assinaturaId,
        aplicativoAssinanteId: d.aplicativoAssinanteId,
        tipoDeEventoId: d.tipoDeEventoId,
        versaoDoEsquema: 1,
        urlDeDestino: d.urlDeDestino,
        maximoDeTentativas: d.maximoDeTentativas,
      },
    ],
    trabalhos: [
      mensagemDoTrabalho(
        trabalhoDeEntrega.schema.parse({
          entrega_id: entregaId,
          evento_id: eventoId,
          assinatura_id: d.assinaturaId,
          url_de_destino: d.urlDeDestino,
          corpo,
          request_id: null,
        }),
      ),
    ],
  };
}

/**
 * Writes `quantos` events of one delivery each for `d`, then waits until the relay has published
 * every outbox row (at most `prazoMs`). Gives the seconds each part took.
 */
export async function acumular(
  databaseUrl: string,
  d: Destinatario,
  quantos: number,
  dados: { entidadeId: string; dadosTexto: string },
  prazoMs = 600_000,
): Promise<{ escritaSegundos: number; relaySegundos: number; limpezaSegundos?: number }> {
  const sql = new SqlPool(databaseUrl, PARALELOS);
  try {
    const inicio = Date.now();
    let feitos = 0;
    await Promise.all(
      Array.from({ length: PARALELOS }, async () => {
        while (feitos < quantos) {
          const lote = Array.from({ length: Math.min(POR_COMANDO, quantos - feitos) }, () =>
            gravacao(d, dados.entidadeId, dados.dadosTexto),
          );
          feitos += lote.length;
          await sql.consultar(COMANDO, SQL_DA_GRAVACAO, valoresDaGravacao(lote));
          const paraARelay = outboxInsert(lote.flatMap((g) => g.trabalhos));
          await sql.consultar('acumulo_outbox_insert', paraARelay.text, paraARelay.values);
        }
      }),
    );
    const escrito = Date.now();
    const limite = escrito + prazoMs;
    while (
      (await sql.consultar('acumulo_outbox', 'select 1 from outbox where publicado_em is null limit 1', [])).length > 0
    ) {
      if (Date.now() > limite)
        throw new Error(`the outbox relay had not published the backlog ${prazoMs / 1000} s later`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const publicado = Date.now();
    return {
      escritaSegundos: (escrito - inicio) / 1000,
      relaySegundos: (publicado - escrito) / 1000,
      limpezaSegundos: await emLugarDoAutovacuum(databaseUrl),
    };
  } finally {
    await sql.fechar();
  }
}

/**
 * VACUUM (ANALYZE) of the whole database when the server runs no autovacuum; the seconds it took, or
 * undefined when the server's own autovacuum is on (it cleans when it would in production).
 */
async function emLugarDoAutovacuum(databaseUrl: string): Promise<number | undefined> {
  const cliente = pgClient(databaseUrl);
  await cliente.connect();
  try {
    const { rows } = await cliente.query<{ autovacuum: string }>('show autovacuum');
    if (rows[0]?.autovacuum === 'on') return undefined;
    const inicio = Date.now();
    await cliente.query('vacuum (analyze)');
    return (Date.now() - inicio) / 1000;
  } finally {
    await cliente.end();
  }
}
