import { origemDaUrl } from '@hub/destinations';
import { BALDES_DE_DURACAO } from '@hub/hub-data';
import { uuidv7 } from '@hub/database';
import {
  auth,
  type Contexto,
  criarAplicativo,
  criarTipo,
  criarVersao,
  encerrarContexto,
  expectPagina,
  iniciarContexto,
} from '../../contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
}, 60_000);
afterAll(() => encerrarContexto(ctx));

const painel = () => auth(ctx.todas);
const tokenDe = (aplicativo: Record<string, unknown>) => ctx.identity.appToken(aplicativo.client_id as string);

describe('GET /tipos-de-evento: what an application may subscribe to', () => {
  test('When types are active, switched off, or have a version switched off, then only the active ones come, with their versions on, schemas and example bodies', async () => {
    const ativo = await criarTipo(ctx);
    await criarVersao(ctx, ativo.id);
    const v2 = await criarVersao(ctx, ativo.id);
    await ctx.api().patch(`/versao-de-esquema/${v2.id}`).set(painel()).send({ ativa: false }).expect(200);
    const desligado = await criarTipo(ctx);
    await criarVersao(ctx, desligado.id);
    await ctx.api().patch(`/tipo-de-evento/${desligado.id}`).set(painel()).send({ ativo: false }).expect(200);
    const token = await tokenDe(await criarAplicativo(ctx));
    const response = await ctx.api().get('/tipos-de-evento?tamanho=100').set(auth(token));
    expect(response.status).toBe(200);
    expectPagina(response.body, 1, 100);
    const nomes = response.body.itens.map((t) => t.nome);
    expect(nomes).toContain(ativo.nome);
    expect(nomes).not.toContain(desligado.nome);
    expect([...nomes].sort()).toEqual(nomes);
    const tipo = response.body.itens.find((t) => t.id === ativo.id) as { versoes: Record<string, unknown>[] };
    expect(tipo.versoes.map((v) => v.versao)).toEqual([1]);
    expect(tipo.versoes[0]).toMatchObject({
      esquema: { type: 'object', required: ['numero', 'valor'] },
      exemplo: { tipo: ativo.nome, versao_do_esquema: 1, dados: { numero: 'exemplo', valor: 0 } },
    });
  });

  test('When a panel user’s token asks, then 401 tipo_de_token_invalido', async () => {
    const response = await ctx.api().get('/tipos-de-evento').set(painel());
    expect([response.status, response.body.codigo]).toEqual([401, 'tipo_de_token_invalido']);
  });
});

describe('GET /assinaturas/{id}/saude', () => {
  async function assinaturaCom(url: string) {
    const assinante = await criarAplicativo(ctx, 'Assinante');
    const tipo = await criarTipo(ctx);
    await criarVersao(ctx, tipo.id);
    const { body } = await ctx
      .api()
      .post('/assinatura')
      .set(painel())
      .send({
        aplicativo_assinante_id: assinante.id,
        tipo_de_evento_id: tipo.id,
        versao_do_esquema: 1,
        url_de_destino: url,
      })
      .expect(201);
    return { assinante, tipo, assinaturaId: body.id as string, token: await tokenDe(assinante) };
  }

  /** Attempts of the subscription started `horasAtras` ago, `falhas` of them failed. */
  async function tentativas(assinaturaId: string, quantas: number, falhas: number, horasAtras: number) {
    const { tipoDeEventoId, aplicativoAssinanteId } = await ctx.hub.db.assinatura.findUniqueOrThrow({
      where: { id: assinaturaId },
    });
    const agora = new Date();
    const evento = uuidv7();
    const publicador = await ctx.hub.db.tipoDeEvento.findUniqueOrThrow({ where: { id: tipoDeEventoId } });
    await ctx.hub.db.evento.create({
      data: {
        id: evento,
        tipoDeEventoId,
        versaoDoEsquema: 1,
        aplicativoPublicadorId: publicador.aplicativoId,
        entidadeId: 'e',
        ocorridoEm: agora,
        recebidoEm: agora,
        dados: {},
      },
    });
    const entrega = uuidv7();
    await ctx.hub.db.entrega.create({
      data: {
        id: entrega,
        eventoId: evento,
        eventoRecebidoEm: agora,
        entidadeId: 'e',
        assinaturaId,
        aplicativoAssinanteId,
        tipoDeEventoId,
        versaoDoEsquema: 1,
        urlDeDestino: 'https://x.example/',
        situacao: 'concluida',
        maximoDeTentativas: 50,
        proximaTentativaEm: agora,
        criadaEm: agora,
        atualizadaEm: agora,
      },
    });
    await ctx.hub.db.tentativa.createMany({
      data: Array.from({ length: quantas }, (_, i) => ({
        id: uuidv7(),
        entregaId: entrega,
        assinaturaId,
        numero: i + 1,
        iniciadaEm: new Date(agora.getTime() - horasAtras * 3_600_000),
        duracaoMs: 20,
        statusHttp: i < falhas ? 500 : 200,
        sucesso: i >= falhas,
      })),
    });
  }

  test('When the subscription has attempts within and before the last 24 h and its destination has figures, then its counts, circuit and percentiles', async () => {
    const s = await assinaturaCom('https://saude.example/webhook');
    await tentativas(s.assinaturaId, 5, 2, 1);
    await tentativas(s.assinaturaId, 7, 7, 25);
    const destino = await ctx.hub.db.destino.findUniqueOrThrow({
      where: { origem: origemDaUrl('https://saude.example/webhook') },
    });
    const baldes = (i: Record<number, number>) => Array.from({ length: BALDES_DE_DURACAO }, (_, n) => i[n] ?? 0);
    const minuto = (horas: number) => new Date(Math.floor((Date.now() - horas * 3_600_000) / 60_000) * 60_000);
    await ctx.hub.db.destinoMinuto.createMany({
      data: [
        { destinoId: destino.id, minuto: minuto(2), tentativas: 99, falhas: 0, duracoes: baldes({ 1: 99 }) },
        { destinoId: destino.id, minuto: minuto(20), tentativas: 1, falhas: 0, duracoes: baldes({ 9: 1 }) },
        { destinoId: destino.id, minuto: minuto(30), tentativas: 900, falhas: 0, duracoes: baldes({ 11: 900 }) },
      ],
    });
    await ctx.hub.db.destino.update({ where: { id: destino.id }, data: { circuito: 'aberto' } });
    const response = await ctx.api().get(`/assinaturas/${s.assinaturaId}/saude`).set(auth(s.token));
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      assinatura_id: s.assinaturaId,
      tentativas_nas_ultimas_24_horas: 5,
      falhas_nas_ultimas_24_horas: 2,
      destino: {
        origem: 'https://saude.example',
        circuito: 'aberto',
        pausado: false,
        latencia_p50_ms: 10,
        latencia_p99_ms: 10,
      },
    });
  });

  test('When another application asks for the health of a subscription not its own, or one that does not exist, then 404', async () => {
    const s = await assinaturaCom('https://saude2.example/webhook');
    const outro = await tokenDe(await criarAplicativo(ctx));
    for (const id of [s.assinaturaId, '01900000-0000-7000-8000-00000000ffff']) {
      const response = await ctx.api().get(`/assinaturas/${id}/saude`).set(auth(outro));
      expect(response.status).toBe(404);
    }
    const propria = await ctx.api().get(`/assinaturas/${s.assinaturaId}/saude`).set(auth(s.token));
    expect(propria.body).toMatchObject({ tentativas_nas_ultimas_24_horas: 0, destino: { latencia_p50_ms: null } });
  });
});

describe('POST /assinaturas/testar-filtro', () => {
  test('When an application tests a filter, then it answers as the panel’s test; an invalid filter is 422 filtro_invalido', async () => {
    const token = await tokenDe(await criarAplicativo(ctx));
    const testar = (corpo: Record<string, unknown>) =>
      ctx.api().post('/assinaturas/testar-filtro').set(auth(token)).send(corpo);
    const filtro = { 'dados.valor': { $gte: 100 } };
    expect((await testar({ filtro, dados: { valor: 150 } })).body).toEqual({ corresponde: true });
    expect((await testar({ filtro, dados: { valor: 50 } })).body).toEqual({ corresponde: false });
    const invalido = await testar({ filtro: { 'dados.valor': { $gte: [] } }, dados: {} });
    expect([invalido.status, invalido.body.codigo]).toEqual([422, 'filtro_invalido']);
    const doPainel = await ctx.api().post('/assinaturas/testar-filtro').set(painel()).send({ filtro, dados: {} });
    expect(doPainel.status).toBe(401);
  });
});
