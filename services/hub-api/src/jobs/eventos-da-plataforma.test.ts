import { randomUUID } from 'node:crypto';
import { encode } from '@hub/broker';
import { type EventoDaPlataforma, eventoDaPlataforma } from '@hub/contracts';
import { uniqueName, waitFor } from '@hub/testing';
import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../contexto.test-support';

const IDENTIDADE = '01900000-0000-7000-8000-000000000001';
const COLABORADOR_ATUALIZADO = '01900000-0000-7000-8000-000000000002';
const queue = uniqueName('hub-api.eventos-da-plataforma');
const processados: EventoDaPlataforma[] = [];

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto({
    start: { eventosDaPlataformaQueue: queue, onEventoDaPlataforma: (m) => processados.push(m) },
  });
});
afterAll(() => encerrarContexto(ctx));

/** A `colaborador.atualizado` announcement as the function service writes it when a function is renamed. */
function anuncio(extra: Partial<EventoDaPlataforma> = {}): EventoDaPlataforma {
  const termoauth_id = `t-${randomUUID()}`;
  return {
    id: randomUUID(),
    aplicativo_client_id: 'identidade',
    tipo_de_evento_nome: 'colaborador.atualizado',
    versao_do_esquema: 1,
    entidade_id: termoauth_id,
    ocorrido_em: new Date().toISOString(),
    dados: {
      termoauth_id,
      email: 'ana@empresa.com.br',
      nome: 'Ana',
      ativo: true,
      funcao: { id: 'f1', nome: 'Analista' },
    },
    ...extra,
  };
}

/** Sends the message to the hub's queue as the exchange would (same body, same message id). */
const entregar = (mensagem: EventoDaPlataforma) =>
  ctx.hub.broker.publish('', queue, encode(eventoDaPlataforma, mensagem), { messageId: mensagem.id });

const processado = (id: string, vezes: number) =>
  waitFor(() => processados.filter((m) => m.id === id).length >= vezes, { what: `message ${id} handled ${vezes}x` });

describe('platform events (queue hub-api.eventos-da-plataforma)', () => {
  test('When a colaborador.atualizado message is delivered twice, then one event of the application identidade is stored', async () => {
    const mensagem = anuncio();
    await entregar(mensagem);
    await entregar(mensagem);
    await processado(mensagem.id, 2);
    const eventos = await ctx.hub.db.evento.findMany({ where: { entidadeId: mensagem.entidade_id } });
    expect(eventos).toHaveLength(1);
    expect(eventos[0]).toMatchObject({
      aplicativoPublicadorId: IDENTIDADE,
      tipoDeEventoId: COLABORADOR_ATUALIZADO,
      versaoDoEsquema: 1,
      publicadoPeloEmail: null,
      ocorridoEm: new Date(mensagem.ocorrido_em),
    });
    const lido = await ctx.api().get(`/evento/${eventos[0]!.id}`).set(auth(ctx.leitor));
    expect(lido.body).toMatchObject({ aplicativo_publicador_nome: 'Identidade', dados: mensagem.dados });
  });

  test('When the message breaks the schema of the version, then it is stored as refused (client id identidade) and no event is made', async () => {
    const mensagem = anuncio({ dados: { nome: 1 } });
    await entregar(mensagem);
    await processado(mensagem.id, 1);
    expect(await ctx.hub.db.evento.count({ where: { entidadeId: mensagem.entidade_id } })).toBe(0);
    const recusas = await ctx.hub.db.eventoRecusado.findMany({
      where: { clientId: 'identidade', codigo: 'dados_invalidos' },
    });
    expect(recusas.some((r) => r.corpo?.includes(mensagem.id))).toBe(true);
  });
});
