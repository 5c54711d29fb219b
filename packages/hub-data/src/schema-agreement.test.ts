import { readFileSync } from 'node:fs';
import path from 'node:path';
import { uuidv7 } from '@hub/database';
import { createTestDatabase, type TestDatabase } from '@hub/database/test-support';
import { createDb, type Db, HUB_DATA_MIGRATIONS_DIR } from './index';

// The SQL migrations are the source of truth; this proves the Prisma schema mirrors them: the same
// tables and columns, with matching types and nullability, and every model written and read.
let database: TestDatabase;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('hub', HUB_DATA_MIGRATIONS_DIR);
  db = createDb(database.url);
});
afterAll(async () => {
  await db?.$disconnect();
  await database?.drop();
});

interface Coluna {
  tabela: string;
  coluna: string;
  tipo: string;
  nula: boolean;
}

const SCALARS: Record<string, string[]> = {
  String: ['text', 'uuid'],
  Int: ['integer'],
  BigInt: ['bigint'],
  Boolean: ['boolean'],
  DateTime: ['timestamp with time zone'],
  Json: ['jsonb', 'json'], // Prisma's default on PostgreSQL is jsonb; @db.Json says json
};

/** The tables and columns the Prisma schema describes (scalar fields only). */
function colunasDoPrisma(): Coluna[] {
  const text = readFileSync(path.join(__dirname, '../prisma/schema.prisma'), 'utf8');
  const colunas: Coluna[] = [];
  for (const [, body] of text.matchAll(/^model \w+ \{\n([\s\S]*?)^\}/gm)) {
    const tabela = /@@map\("(\w+)"\)/.exec(body!)?.[1];
    if (!tabela) throw new Error('every model maps to a snake_case table');
    for (const line of body!.split('\n')) {
      const field = /^\s+(\w+)\s+(\w+)(\??)(\[\])?(.*)$/.exec(line);
      if (!field || !SCALARS[field[2]!]) continue;
      const coluna = /@map\("(\w+)"\)/.exec(field[5]!)?.[1] ?? field[1]!;
      const tipo = field[4]
        ? 'ARRAY'
        : field[2] === 'String' && field[5]!.includes('@db.Uuid')
          ? 'uuid'
          : field[2] === 'Json' && field[5]!.includes('@db.Json')
            ? 'json'
            : SCALARS[field[2]!]![0]!;
      colunas.push({ tabela, coluna, tipo, nula: field[3] === '?' });
    }
  }
  return colunas;
}

const key = (c: Coluna) => `${c.tabela}.${c.coluna}`;

it('When the migrated database is compared with the Prisma schema, then the same columns, types and nullability exist', async () => {
  const rows = await db.$queryRaw<
    { tabela: string; coluna: string; tipo: string; nula: string; precisao: number | null }[]
  >`
    select table_name as tabela, column_name as coluna, data_type as tipo, is_nullable as nula, datetime_precision as precisao
    from information_schema.columns
    where table_schema = 'public' and table_name <> 'schema_migrations'`;
  const banco = rows.map((r) => ({ tabela: r.tabela, coluna: r.coluna, tipo: r.tipo, nula: r.nula === 'YES' }));
  const prisma = colunasDoPrisma();
  expect(banco.map(key).sort()).toEqual(prisma.map(key).sort());
  const byKey = new Map(banco.map((c) => [key(c), c]));
  for (const coluna of prisma) expect({ ...byKey.get(key(coluna)) }).toEqual(coluna);
  for (const r of rows.filter((r) => r.tipo === 'timestamp with time zone'))
    expect({ coluna: `${r.tabela}.${r.coluna}`, precisao: r.precisao }).toEqual({
      coluna: `${r.tabela}.${r.coluna}`,
      precisao: 3,
    });
});

it('When every model is written and read through Prisma, then the migrated tables accept and return every field', async () => {
  const now = new Date('2026-11-21T21:00:00.123Z');
  const aplicativo = await db.aplicativo.create({
    data: { id: uuidv7(), nome: 'Loja', clientId: 'loja', ativo: true, criadoEm: now, atualizadoEm: now },
  });
  const tipo = await db.tipoDeEvento.create({
    data: {
      id: uuidv7(),
      nome: 'pedido.criado',
      descricao: 'd',
      aplicativoId: aplicativo.id,
      ativo: true,
      retencaoEmDias: 30,
      criadoEm: now,
      atualizadoEm: now,
    },
  });
  const esquema = { type: 'object', properties: { b: { type: 'string' }, a: { type: 'integer' } } };
  const versao = await db.versaoDeEsquema.create({
    data: {
      id: uuidv7(),
      tipoDeEventoId: tipo.id,
      versao: 1,
      esquema,
      descricao: 'v1',
      ativa: true,
      criadoEm: now,
      atualizadoEm: now,
    },
  });
  const assinatura = await db.assinatura.create({
    data: {
      id: uuidv7(),
      aplicativoAssinanteId: aplicativo.id,
      tipoDeEventoId: tipo.id,
      versaoDoEsquema: 1,
      urlDeDestino: 'https://r.example/h',
      maximoDeTentativas: 8,
      ativa: true,
      entregaOrdenada: true,
      excluidaEm: now,
      criadoEm: now,
      atualizadoEm: now,
    },
  });
  expect(await db.aplicativo.findUniqueOrThrow({ where: { clientId: 'loja' } })).toEqual(aplicativo);
  expect(
    await db.tipoDeEvento.findUniqueOrThrow({ where: { nome: 'pedido.criado' }, include: { aplicativo: true } }),
  ).toEqual({ ...tipo, aplicativo });
  const lida = await db.versaoDeEsquema.findUniqueOrThrow({
    where: { tipoDeEventoId_versao: { tipoDeEventoId: tipo.id, versao: 1 } },
  });
  expect(lida).toEqual(versao);
  expect(Object.keys(lida.esquema as object)).toEqual(['type', 'properties']);
  expect(Object.keys((lida.esquema as { properties: object }).properties)).toEqual(['b', 'a']);
  expect(
    await db.assinatura.findUniqueOrThrow({
      where: { id: assinatura.id },
      include: { versao: { include: { tipoDeEvento: true } }, aplicativoAssinante: true },
    }),
  ).toMatchObject({
    ...assinatura,
    versao: { versao: 1, tipoDeEvento: { nome: 'pedido.criado' } },
    aplicativoAssinante: { clientId: 'loja' },
  });
  expect(
    (await db.assinatura.update({ where: { id: assinatura.id }, data: { excluidaEm: null } })).excluidaEm,
  ).toBeNull();
  expect((await db.versaoDeEsquema.update({ where: { id: versao.id }, data: { ativa: false } })).ativa).toBe(false);

  const evento = await db.evento.create({
    data: {
      id: uuidv7(),
      tipoDeEventoId: tipo.id,
      versaoDoEsquema: 1,
      aplicativoPublicadorId: aplicativo.id,
      entidadeId: 'pedido-1',
      ocorridoEm: now,
      recebidoEm: now,
      publicadoPeloEmail: 'ana@empresa.com.br',
      dados: { b: 1, a: [true, null] },
    },
  });
  const entrega = await db.entrega.create({
    data: {
      id: uuidv7(),
      eventoId: evento.id,
      eventoRecebidoEm: now,
      entidadeId: 'pedido-1',
      assinaturaId: assinatura.id,
      aplicativoAssinanteId: aplicativo.id,
      tipoDeEventoId: tipo.id,
      versaoDoEsquema: 1,
      urlDeDestino: 'https://r.example/h',
      situacao: 'pendente',
      quantidadeDeTentativas: 1,
      tentativasNoCicloAtual: 1,
      maximoDeTentativas: 8,
      proximaTentativaEm: now,
      entregueEm: now,
      ultimoErro: 'HTTP 500',
      criadaEm: now,
      atualizadaEm: now,
      sequencia: 7n,
      emEspera: false,
    },
  });
  const cadeia = await db.sequenciaDeEntidade.create({
    data: { assinaturaId: assinatura.id, entidadeId: 'pedido-1', ultima: 7n, pronta: 7n },
  });
  expect(
    await db.sequenciaDeEntidade.findUniqueOrThrow({
      where: { assinaturaId_entidadeId: { assinaturaId: assinatura.id, entidadeId: 'pedido-1' } },
    }),
  ).toEqual(cadeia);
  // Not concluded: its copy in entrega_nao_concluida, written by the triggers of migration 018.
  expect(await db.entregaNaoConcluida.findUniqueOrThrow({ where: { entregaId: entrega.id } })).toEqual({
    entregaId: entrega.id,
    fase: 'fila',
    proximaTentativaEm: now,
    criadaEm: now,
    assinaturaId: assinatura.id,
    tipoDeEventoId: tipo.id,
    aplicativoAssinanteId: aplicativo.id,
  });
  const tentativa = await db.tentativa.create({
    data: {
      id: uuidv7(),
      entregaId: entrega.id,
      assinaturaId: assinatura.id,
      numero: 1,
      iniciadaEm: now,
      duracaoMs: 12,
      statusHttp: 500,
      sucesso: false,
      resposta: 'no',
      erro: 'HTTP 500',
      cabecalhos: { 'webhook-id': entrega.id },
    },
  });
  const lido = await db.evento.findUniqueOrThrow({
    where: { id: evento.id },
    include: { entregas: { include: { tentativas: true } } },
  });
  expect(lido).toEqual({ ...evento, entregas: [{ ...entrega, tentativas: [tentativa] }] });
  expect(Object.keys(lido.dados as object)).toEqual(['b', 'a']);

  const recusado = await db.eventoRecusado.create({
    data: {
      id: uuidv7(),
      codigo: 'dados_invalidos',
      statusHttp: 422,
      detalhe: 'd',
      erros: [{ caminho: '/dados', mensagem: 'm' }],
      corpo: '{}',
      corpoTruncado: true,
      tipoDeEventoId: tipo.id,
      versaoDoEsquema: 1,
      aplicativoId: aplicativo.id,
      clientId: 'loja',
      publicadoPeloEmail: null,
      recebidoEm: now,
    },
  });
  expect(await db.eventoRecusado.findUniqueOrThrow({ where: { id: recusado.id } })).toEqual(recusado);
  const chave = await db.chaveDeIdempotencia.create({
    data: { escopo: `aplicativo:${aplicativo.id}`, chave: 'k', impressao: 'h', eventoId: evento.id, criadaEm: now },
  });
  expect(
    await db.chaveDeIdempotencia.findUniqueOrThrow({ where: { escopo_chave: { escopo: chave.escopo, chave: 'k' } } }),
  ).toEqual(chave);
  // An hour with no event: the triggers on evento and entrega (migrations 005 and 023) upsert a slice of
  // the hour of what they write.
  const hora = new Date('2026-11-21T05:00:00.000Z');
  const faixa = await db.resumoPorHora.create({
    data: {
      hora,
      fatia: 3,
      eventos: 1,
      recusados: 2,
      entregasConcluidas: 3,
      tentativasComFalha: 4,
      eventosGuardados: 5,
      entregasGuardadas: 6,
    },
  });
  expect(await db.resumoPorHora.findUniqueOrThrow({ where: { hora_fatia: { hora, fatia: 3 } } })).toEqual(faixa);
  const saida = await db.outbox.create({
    data: {
      id: uuidv7(),
      exchange: 'x',
      routingKey: 'k',
      messageId: entrega.id,
      body: { id: entrega.id },
      headers: {},
    },
  });
  expect(await db.outbox.findUniqueOrThrow({ where: { id: saida.id } })).toEqual(saida);
  const link = await db.linkDoPortal.create({
    data: {
      id: uuidv7(),
      aplicativoId: aplicativo.id,
      tokenSha256: 'a'.repeat(64),
      expiraEm: now,
      revogadoEm: now,
      criadoPeloEmail: 'ana@empresa.example',
      criadoEm: now,
    },
  });
  expect(await db.linkDoPortal.findUniqueOrThrow({ where: { tokenSha256: 'a'.repeat(64) } })).toEqual(link);
  const autoria = { alteradaPorTipo: 'aplicativo', alteradaPor: 'loja', alteradaEm: now };
  expect(await db.assinatura.update({ where: { id: assinatura.id }, data: autoria })).toMatchObject(autoria);
  const destino = await db.destino.create({
    data: { id: uuidv7(), origem: 'https://loja.example', limitePorSegundo: 50, criadoEm: now, atualizadoEm: now },
  });
  expect(destino).toMatchObject({ concorrenciaMaxima: 10, pausado: false, circuito: 'fechado', circuitoAberturas: 0 });
  const minuto = await db.destinoMinuto.create({
    data: {
      destinoId: destino.id,
      minuto: hora,
      tentativas: 3,
      falhas: 1,
      duracoes: [1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    },
  });
  const emAndamento = await db.destinoEmAndamento.create({
    data: { destinoId: destino.id, processo: uuidv7(), emAndamento: 4, validoAte: now },
  });
  const aberto = await db.destino.update({
    where: { id: destino.id },
    data: {
      circuito: 'meio_aberto',
      circuitoDesde: now,
      circuitoAbertoAte: now,
      circuitoAberturas: 2,
      circuitoSonda: uuidv7(),
      circuitoSondaAte: now,
    },
  });
  const transicao = await db.destinoCircuito.create({
    data: {
      id: uuidv7(),
      destinoId: destino.id,
      em: now,
      de: 'aberto',
      para: 'meio_aberto',
      motivo: 'periodo_encerrado',
      detalhe: 'd',
      falhas: 3,
      tentativas: 4,
      abertoAte: now,
      por: 'ana@empresa.com.br',
    },
  });
  expect(
    await db.destino.findUniqueOrThrow({
      where: { id: destino.id },
      include: { minutos: true, emAndamento: true, transicoes: true },
    }),
  ).toEqual({
    ...aberto,
    minutos: [minuto],
    emAndamento: [emAndamento],
    transicoes: [transicao],
  });
  const solicitacao = await db.solicitacaoDeReprocessamento.create({
    data: {
      id: uuidv7(),
      situacao: 'em_andamento',
      entregaIds: [entrega.id],
      assinaturaId: assinatura.id,
      tipoDeEventoId: tipo.id,
      desde: now,
      ate: now,
      quantidadeDeEntregas: 3,
      reprocessadas: 2,
      ignoradas: 1,
      cursorCriadaEm: now,
      cursorId: entrega.id,
      solicitadaPeloEmail: 'ana@empresa.com.br',
      criadaEm: now,
      atualizadaEm: now,
      iniciadaEm: now,
      concluidaEm: null,
    },
  });
  expect(await db.solicitacaoDeReprocessamento.findUniqueOrThrow({ where: { id: solicitacao.id } })).toEqual(
    solicitacao,
  );
  const reproducao = await db.reproducao.create({
    data: {
      id: uuidv7(),
      assinaturaId: assinatura.id,
      desde: now,
      ate: now,
      incluirEntregues: true,
      situacao: 'em_andamento',
      quantidadeDeEventos: 3,
      criadas: 1,
      reenviadas: 1,
      ignoradas: 1,
      solicitadaPor: 'ana@empresa.com.br',
      cursorRecebidoEm: now,
      cursorEventoId: evento.id,
      emVoo: [entrega.id],
      criadaEm: now,
      atualizadaEm: now,
      concluidaEm: null,
    },
  });
  expect(await db.reproducao.findUniqueOrThrow({ where: { id: reproducao.id } })).toEqual(reproducao);

  // Retention erases an event with its deliveries and attempts.
  await db.evento.delete({ where: { id: evento.id } });
  expect(await db.entrega.count({ where: { eventoId: evento.id } })).toBe(0);
  expect(await db.tentativa.count({ where: { entregaId: entrega.id } })).toBe(0);
  expect(await db.entregaNaoConcluida.count({ where: { entregaId: entrega.id } })).toBe(0);
});

it('When a subscription names a version its type does not have, then the database refuses it', async () => {
  const now = new Date();
  const { id: tipoDeEventoId } = await db.tipoDeEvento.findUniqueOrThrow({ where: { nome: 'colaborador.atualizado' } });
  const { id: aplicativoAssinanteId } = await db.aplicativo.findUniqueOrThrow({ where: { clientId: 'identidade' } });
  await expect(
    db.assinatura.create({
      data: {
        id: uuidv7(),
        aplicativoAssinanteId,
        tipoDeEventoId,
        versaoDoEsquema: 2,
        urlDeDestino: 'https://x.example',
        maximoDeTentativas: 1,
        ativa: true,
        criadoEm: now,
        atualizadoEm: now,
      },
    }),
  ).rejects.toMatchObject({ code: 'P2003' });
});
