import { type Gravacao, VALIDADE_DA_CHAVE_MS } from './gravacao';

/*
 * The parameters are PostgreSQL array literals written here, not JS arrays: node-postgres quotes
 * and escapes every element of an array parameter with two regular expressions (about 2 % of
 * hub-api's CPU per publication), where ids, numbers and ISO timestamps need no quoting at all
 * and text needs escaping only when it holds a quote or a backslash. PostgreSQL reads the same
 * values either way (array_in of the parameter's declared type).
 */

/** An array literal of values that need no quoting: uuids, integers, ISO timestamps, booleans (t/f). */
export const literal = (valores: readonly (string | number)[]): string => `{${valores.join(',')}}`;

const ESCAPAR = /["\\]/;
/** An array literal of text (null: NULL), each element quoted, `"` and `\\` escaped. */
function literalDeTextos(valores: readonly (string | null)[]): string {
  let texto = '{';
  for (let i = 0; i < valores.length; i++) {
    const v = valores[i];
    if (i > 0) texto += ',';
    if (v === null || v === undefined) texto += 'NULL';
    else if (ESCAPAR.test(v)) texto += `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
    else texto += `"${v}"`;
  }
  return `${texto}}`;
}

/**
 * The events' columns of the batch, in EVENTOS' order, and their ids; `recebido`, each event's
 * recebido_em as ISO text, written once per event and read again by the keys and the deliveries.
 */
function colunasDosEventos(lote: Gravacao[]) {
  const n = lote.length;
  const eventoId: string[] = new Array(n);
  const tipo: string[] = new Array(n);
  const versao: number[] = new Array(n);
  const publicador: string[] = new Array(n);
  const entidade: string[] = new Array(n);
  const ocorrido: string[] = new Array(n);
  const recebido: string[] = new Array(n);
  const email: (string | null)[] = new Array(n);
  const dados: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const e = lote[i]!.evento;
    const recebidoEm = e.recebidoEm.toISOString();
    eventoId[i] = e.id;
    tipo[i] = e.tipoDeEventoId;
    versao[i] = e.versaoDoEsquema;
    publicador[i] = e.aplicativoPublicadorId;
    entidade[i] = e.entidadeId;
    ocorrido[i] = e.ocorridoEm === e.recebidoEm ? recebidoEm : e.ocorridoEm.toISOString();
    recebido[i] = recebidoEm;
    email[i] = e.publicadoPeloEmail;
    dados[i] = e.dadosTexto;
  }
  const eventos = [
    literal(tipo),
    literal(versao),
    literal(publicador),
    literalDeTextos(entidade),
    literal(ocorrido),
    literal(recebido),
    literalDeTextos(email),
    // One JSON array of the batch's dados, spliced as written: as a json[] each ~1 KiB text was
    // escaped into an array literal by the driver (its largest cost per event) and parsed back.
    `[${dados.join(',')}]`,
  ];
  return { eventoId: literal(eventoId), eventos, recebido };
}

/** The keys' columns ($1–$6), and which events carry one ($8). */
function colunasDasChaves(lote: Gravacao[], recebido: readonly string[]) {
  const comChave: string[] = new Array(lote.length);
  const escopo: string[] = [];
  const chave: string[] = [];
  const impressaoDaChave: string[] = [];
  const evento: string[] = [];
  const criada: string[] = [];
  lote.forEach((g, i) => {
    comChave[i] = g.chave ? 't' : 'f';
    if (!g.chave) return;
    escopo.push(g.chave.escopo);
    chave.push(g.chave.chave);
    impressaoDaChave.push(g.chave.impressao);
    evento.push(g.evento.id);
    criada.push(recebido[i]!);
  });
  const chaves = [
    literalDeTextos(escopo),
    literalDeTextos(chave),
    literalDeTextos(impressaoDaChave),
    literal(evento),
    literal(criada),
    VALIDADE_DA_CHAVE_MS,
  ];
  return { chaves, comChave: literal(comChave) };
}

/** The deliveries' columns, in ENTREGAS' order, and the ids of the ordered ones. */
function colunasDasEntregas(lote: Gravacao[], recebidoDoEvento: readonly string[]) {
  const id: string[] = [];
  const evento: string[] = [];
  const recebido: string[] = [];
  const entidade: string[] = [];
  const assinatura: string[] = [];
  const assinante: string[] = [];
  const tipo: string[] = [];
  const versao: number[] = [];
  const url: string[] = [];
  const maximo: number[] = [];
  const enOrdenada: string[] = [];
  lote.forEach((g, i) => {
    for (const en of g.entregas) {
      id.push(en.id);
      evento.push(en.eventoId);
      recebido.push(
        en.eventoRecebidoEm === g.evento.recebidoEm ? recebidoDoEvento[i]! : en.eventoRecebidoEm.toISOString(),
      );
      entidade.push(en.entidadeId);
      assinatura.push(en.assinaturaId);
      assinante.push(en.aplicativoAssinanteId);
      tipo.push(en.tipoDeEventoId);
      versao.push(en.versaoDoEsquema);
      url.push(en.urlDeDestino);
      maximo.push(en.maximoDeTentativas);
      if (en.ordenada) enOrdenada.push(en.id);
    }
  });
  const entregas = [
    literal(id),
    literal(evento),
    literal(recebido),
    literalDeTextos(entidade),
    literal(assinatura),
    literal(assinante),
    literal(tipo),
    literal(versao),
    literalDeTextos(url),
    literal(maximo),
  ];
  return { entregas, enOrdenada };
}

/** One array per column of the batch, in the statements' order. */
export function colunas(lote: Gravacao[]) {
  const { recebido, ...eventos } = colunasDosEventos(lote);
  return { ...eventos, ...colunasDasChaves(lote, recebido), ...colunasDasEntregas(lote, recebido) };
}
