import {
  compilarFiltro,
  compilarFiltroGuardado,
  FiltroInvalido,
  iguais,
  LIMITES_DO_FILTRO,
  recusaDoFiltro,
} from './filtro';

/** A delivery body as publication gives it to the filters. */
const corpo = {
  id: '019a0000-0000-7000-8000-000000000001',
  tipo: 'pedido.criado',
  versao_do_esquema: 1,
  entidade_id: 'PED-1',
  ocorrido_em: '2026-11-26T10:00:00.000Z',
  recebido_em: '2026-11-26T10:00:01.000Z',
  aplicativo_publicador_id: '019a0000-0000-7000-8000-000000000002',
  assinatura_id: '019a0000-0000-7000-8000-000000000003',
  dados: {
    cliente: { uf: 'SP', nome: 'Ana', vip: true, nota: null },
    valor: 150,
    itens: [{ sku: 'A-1', qtd: 2 }, { sku: 'B-2' }],
    tags: ['novo', 'web'],
  },
};

const corresponde = (filtro: unknown, alvo: unknown = corpo) => {
  const predicado = compilarFiltro(filtro);
  if (predicado === null) throw new Error('expected a filter');
  return predicado(alvo);
};

/** The JSON pointer and message of the refusal of a filter, as a request at /filtro gets it. */
function recusa(filtro: unknown): { caminho: string; mensagem: string } {
  try {
    compilarFiltro(filtro);
  } catch (error) {
    if (!(error instanceof FiltroInvalido)) throw error;
    const problema = recusaDoFiltro(error);
    expect(problema.status).toBe(422);
    expect(problema.codigo).toBe('filtro_invalido');
    return problema.erros![0]!;
  }
  throw new Error(`the filter was accepted: ${JSON.stringify(filtro)}`);
}

describe('paths and literals', () => {
  test('When the filter is null, then there is no predicate: every event matches', () => {
    expect(compilarFiltro(null)).toBeNull();
    expect(compilarFiltro(undefined)).toBeNull();
  });

  test('When a dotted path names a value, then a literal matches by deep equality', () => {
    expect(corresponde({ 'dados.cliente.uf': 'SP' })).toBe(true);
    expect(corresponde({ 'dados.cliente.uf': 'RJ' })).toBe(false);
    expect(corresponde({ entidade_id: 'PED-1', tipo: 'pedido.criado', versao_do_esquema: 1 })).toBe(true);
    expect(corresponde({ 'dados.tags': ['novo', 'web'] })).toBe(true);
    expect(corresponde({ 'dados.tags': ['web', 'novo'] })).toBe(false);
    expect(corresponde({ 'dados.itens.1': { sku: 'B-2' } })).toBe(true);
    expect(corresponde({ 'dados.cliente': { nome: 'Ana', uf: 'SP', vip: true, nota: null } })).toBe(true);
    expect(corresponde({ 'dados.cliente': { uf: 'SP' } })).toBe(false);
    expect(corresponde({ 'dados.cliente.nota': null })).toBe(true);
  });

  test('When a name of digits meets an array, then it indexes it; past the end it is missing', () => {
    expect(corresponde({ 'dados.itens.0.sku': 'A-1' })).toBe(true);
    expect(corresponde({ 'dados.itens.2.sku': { $exists: false } })).toBe(true);
    expect(corresponde({ 'dados.tags.-1': { $exists: false } })).toBe(true);
  });

  test('When an object mixes $ keys and plain keys, or is empty, then it is a literal, not operators', () => {
    const alvo = { dados: { x: { $gt: 1, a: 2 }, vazio: {} } };
    expect(corresponde({ 'dados.x': { $gt: 1, a: 2 } }, alvo)).toBe(true);
    expect(corresponde({ 'dados.vazio': {} }, alvo)).toBe(true);
    expect(corresponde({ 'dados.x': {} }, alvo)).toBe(false);
  });

  test('When every key is a path, then all must hold; an empty filter matches every body', () => {
    expect(corresponde({ 'dados.cliente.uf': 'SP', 'dados.valor': 150 })).toBe(true);
    expect(corresponde({ 'dados.cliente.uf': 'SP', 'dados.valor': 151 })).toBe(false);
    expect(corresponde({})).toBe(true);
  });

  test('When a path walks into a prototype member, then it is missing (only own members count)', () => {
    expect(corresponde({ 'dados.constructor': { $exists: false } })).toBe(true);
    expect(corresponde({ 'dados.tags.length': { $exists: false } })).toBe(true);
    expect(corresponde({ 'dados.__proto__': { $exists: false } })).toBe(true);
    const comProto = JSON.parse('{"dados":{"__proto__":{"a":1}}}');
    expect(corresponde({ 'dados.__proto__.a': 1 }, comProto)).toBe(true);
  });
});

describe('operators', () => {
  test('$eq and $ne compare by deep equality', () => {
    expect(corresponde({ 'dados.valor': { $eq: 150 } })).toBe(true);
    expect(corresponde({ 'dados.cliente': { $eq: { uf: 'SP' } } })).toBe(false);
    expect(corresponde({ 'dados.tags': { $eq: ['novo', 'web'] } })).toBe(true);
    expect(corresponde({ 'dados.cliente.uf': { $ne: 'RJ' } })).toBe(true);
    expect(corresponde({ 'dados.cliente.uf': { $ne: 'SP' } })).toBe(false);
    // An operator's object operand is a literal, whatever its keys.
    expect(corresponde({ 'dados.x': { $eq: { $gt: 1 } } }, { dados: { x: { $gt: 1 } } })).toBe(true);
  });

  test('$gt, $gte, $lt, $lte compare numbers with numbers and strings with strings, nothing else', () => {
    expect(corresponde({ 'dados.valor': { $gt: 100 } })).toBe(true);
    expect(corresponde({ 'dados.valor': { $gt: 150 } })).toBe(false);
    expect(corresponde({ 'dados.valor': { $gte: 150 } })).toBe(true);
    expect(corresponde({ 'dados.valor': { $lt: 150 } })).toBe(false);
    expect(corresponde({ 'dados.valor': { $lte: 150 } })).toBe(true);
    expect(corresponde({ 'dados.valor': { $gt: 100, $lt: 200 } })).toBe(true);
    expect(corresponde({ 'dados.valor': { $gt: 100, $lt: 120 } })).toBe(false);
    expect(corresponde({ ocorrido_em: { $gte: '2026-11-26T00:00:00Z', $lt: '2026-11-27' } })).toBe(true);
    expect(corresponde({ 'dados.cliente.uf': { $gt: 'RJ' } })).toBe(true);
    // A number is not compared with a string, nor a string with a number.
    expect(corresponde({ 'dados.valor': { $gt: '1' } })).toBe(false);
    expect(corresponde({ 'dados.cliente.uf': { $lt: 10 } })).toBe(false);
    expect(corresponde({ 'dados.cliente.vip': { $gte: 0 } })).toBe(false);
  });

  test('$in and $nin test membership, scalars and composite literals alike', () => {
    expect(corresponde({ 'dados.cliente.uf': { $in: ['SP', 'RJ'] } })).toBe(true);
    expect(corresponde({ 'dados.cliente.uf': { $in: ['MG', 'RJ'] } })).toBe(false);
    expect(corresponde({ 'dados.itens.1': { $in: [{ sku: 'B-2' }, 1] } })).toBe(true);
    expect(corresponde({ 'dados.valor': { $in: ['150'] } })).toBe(false);
    expect(corresponde({ 'dados.cliente.uf': { $nin: ['MG', 'RJ'] } })).toBe(true);
    expect(corresponde({ 'dados.cliente.uf': { $nin: ['SP'] } })).toBe(false);
    expect(corresponde({ 'dados.cliente.uf': { $in: [] } })).toBe(false);
    expect(corresponde({ 'dados.cliente.uf': { $nin: [] } })).toBe(true);
  });

  test('$exists tells a present path (null included) from a missing one', () => {
    expect(corresponde({ 'dados.cliente.nota': { $exists: true } })).toBe(true);
    expect(corresponde({ 'dados.cliente.nota': { $exists: false } })).toBe(false);
    expect(corresponde({ 'dados.cliente.cpf': { $exists: false } })).toBe(true);
    expect(corresponde({ 'dados.cliente.cpf': { $exists: true } })).toBe(false);
  });

  test('$regex finds an RE2 expression anywhere in a string; any other value does not match', () => {
    expect(corresponde({ tipo: { $regex: '^pedido\\.' } })).toBe(true);
    expect(corresponde({ entidade_id: { $regex: 'D-\\d+$' } })).toBe(true);
    expect(corresponde({ 'dados.cliente.nome': { $regex: '(?i)^ana$' } })).toBe(true);
    expect(corresponde({ 'dados.cliente.nome': { $regex: '^ana$' } })).toBe(false);
    expect(corresponde({ 'dados.valor': { $regex: '150' } })).toBe(false);
  });
});

describe('missing paths', () => {
  test('When the body lacks the path, then only $exists: false, $ne and $nin match', () => {
    const ausente = 'dados.cliente.cpf';
    const vale = {
      literal: { [ausente]: 'x' },
      literalNull: { [ausente]: null },
      $eq: { [ausente]: { $eq: null } },
      $ne: { [ausente]: { $ne: 'x' } },
      $gt: { [ausente]: { $gt: 0 } },
      $gte: { [ausente]: { $gte: '' } },
      $lt: { [ausente]: { $lt: 0 } },
      $lte: { [ausente]: { $lte: 'z' } },
      $in: { [ausente]: { $in: [null, 'x'] } },
      $nin: { [ausente]: { $nin: [null, 'x'] } },
      existsTrue: { [ausente]: { $exists: true } },
      existsFalse: { [ausente]: { $exists: false } },
      $regex: { [ausente]: { $regex: '' } },
    };
    const resultado = Object.fromEntries(Object.entries(vale).map(([nome, f]) => [nome, corresponde(f)]));
    expect(resultado).toEqual({
      literal: false,
      literalNull: false,
      $eq: false,
      $ne: true,
      $gt: false,
      $gte: false,
      $lt: false,
      $lte: false,
      $in: false,
      $nin: true,
      existsTrue: false,
      existsFalse: true,
      $regex: false,
    });
  });

  test('When a step of the path is not an object (a string, a number, null), then the path is missing', () => {
    expect(corresponde({ 'dados.cliente.uf.x': { $exists: false } })).toBe(true);
    expect(corresponde({ 'dados.cliente.nota.x': { $exists: false } })).toBe(true);
    expect(corresponde({ 'dados.x': { $exists: false } }, { sem: 'dados' })).toBe(true);
  });
});

describe('combinators', () => {
  test('$and holds when all hold, $or when one does, $not when its filter does not', () => {
    const sp = { 'dados.cliente.uf': 'SP' };
    const rj = { 'dados.cliente.uf': 'RJ' };
    const caro = { 'dados.valor': { $gte: 100 } };
    expect(corresponde({ $and: [sp, caro] })).toBe(true);
    expect(corresponde({ $and: [rj, caro] })).toBe(false);
    expect(corresponde({ $or: [rj, caro] })).toBe(true);
    expect(corresponde({ $or: [rj, { 'dados.valor': 1 }] })).toBe(false);
    expect(corresponde({ $not: rj })).toBe(true);
    expect(corresponde({ $not: sp })).toBe(false);
    expect(corresponde({ $not: { 'dados.cpf': 'x' } })).toBe(true);
    expect(corresponde({ $or: [{ $and: [sp, { $not: caro }] }, { 'dados.tags': { $in: [['novo', 'web']] } }] })).toBe(
      true,
    );
  });

  test('When combinators sit beside paths, then every key of the object must hold', () => {
    expect(corresponde({ 'dados.cliente.vip': true, $or: [{ tipo: 'x' }, { tipo: 'pedido.criado' }] })).toBe(true);
    expect(corresponde({ 'dados.cliente.vip': false, $or: [{ tipo: 'x' }, { tipo: 'pedido.criado' }] })).toBe(false);
  });

  test('When nothing can match, then every body is refused', () => {
    const nunca = { $and: [{ tipo: 'a' }, { tipo: 'b' }] };
    expect(corresponde(nunca)).toBe(false);
    expect(corresponde(nunca, {})).toBe(false);
  });
});

describe('refusals: where and why', () => {
  test('When the filter is not an object, then it is refused at /filtro', () => {
    for (const filtro of ['x', 1, true, [], [{ a: 1 }]])
      expect(recusa(filtro)).toEqual({ caminho: '/filtro', mensagem: expect.stringContaining('JSON object') });
  });

  test('When a combinator or an operator is unknown or takes the wrong operand, then the caminho points at it', () => {
    expect(recusa({ $nor: [] }).caminho).toBe('/filtro/$nor');
    expect(recusa({ a: { $foo: 1 } }).caminho).toBe('/filtro/a/$foo');
    expect(recusa({ $and: {} }).caminho).toBe('/filtro/$and');
    expect(recusa({ $or: [] }).caminho).toBe('/filtro/$or');
    expect(recusa({ $or: [{ a: 1 }, 'b'] }).caminho).toBe('/filtro/$or/1');
    expect(recusa({ $not: [{ a: 1 }] }).caminho).toBe('/filtro/$not');
    expect(recusa({ a: { $gt: true } }).caminho).toBe('/filtro/a/$gt');
    expect(recusa({ a: { $lte: null } }).caminho).toBe('/filtro/a/$lte');
    expect(recusa({ a: { $in: 'SP' } }).caminho).toBe('/filtro/a/$in');
    expect(recusa({ a: { $nin: { x: 1 } } }).caminho).toBe('/filtro/a/$nin');
    expect(recusa({ a: { $exists: 1 } }).caminho).toBe('/filtro/a/$exists');
    expect(recusa({ a: { $regex: 1 } }).caminho).toBe('/filtro/a/$regex');
    expect(recusa({ 'a..b': 1 }).caminho).toBe('/filtro/a..b');
    expect(recusa({ '': 1 }).caminho).toBe('/filtro/');
    expect(recusa({ $and: [{ 'x/y': { $gt: [] } }] }).caminho).toBe('/filtro/$and/0/x~1y/$gt');
  });

  test('When a $regex is not RE2 (a backreference, a lookahead) or passes 256 characters, then it is refused', () => {
    expect(recusa({ a: { $regex: '(a)\\1' } })).toEqual({
      caminho: '/filtro/a/$regex',
      mensagem: expect.stringContaining('not an RE2 regular expression'),
    });
    expect(recusa({ a: { $regex: '(?=a)' } }).caminho).toBe('/filtro/a/$regex');
    expect(recusa({ a: { $regex: '(' } }).caminho).toBe('/filtro/a/$regex');
    expect(compilarFiltro({ a: { $regex: 'a'.repeat(LIMITES_DO_FILTRO.regex) } })).not.toBeNull();
    expect(recusa({ a: { $regex: 'a'.repeat(LIMITES_DO_FILTRO.regex + 1) } })).toEqual({
      caminho: '/filtro/a/$regex',
      mensagem: expect.stringContaining('256'),
    });
  });

  test('When a filter holds more than 4 $regex operators, anywhere, then the fifth is refused; 4 are accepted', () => {
    const regexes = (n: number) => ({
      $or: Array.from({ length: n }, () => ({ 'dados.s': { $regex: '[^x]{200}[^a]' } })),
    });
    expect(compilarFiltro(regexes(LIMITES_DO_FILTRO.regexes))).not.toBeNull();
    expect(recusa(regexes(LIMITES_DO_FILTRO.regexes + 1))).toEqual({
      caminho: `/filtro/$or/${LIMITES_DO_FILTRO.regexes}/dados.s/$regex`,
      mensagem: expect.stringContaining('at most 4 $regex'),
    });
    // Counted across paths and levels, not per path.
    expect(
      recusa({
        a: { $regex: 'a' },
        b: { $regex: 'b' },
        $not: { c: { $regex: 'c' }, $and: [{ d: { $regex: 'd' } }, { e: { $regex: 'e' } }] },
      }).caminho,
    ).toBe('/filtro/$not/$and/1/e/$regex');
  });

  test('When a $regex compiles to more than 512 instructions (counted repetitions), then it is refused; 256 characters without one are accepted', () => {
    expect(compilarFiltro({ a: { $regex: '(?:a?){170}a{170}' } })).not.toBeNull();
    expect(recusa({ a: { $regex: '(?:a?){171}a{171}' } })).toEqual({
      caminho: '/filtro/a/$regex',
      mensagem: expect.stringContaining('more than 512'),
    });
    expect(recusa({ a: { $regex: '[^x]{1000}' } }).caminho).toBe('/filtro/a/$regex');
    expect(compilarFiltro({ a: { $regex: '[^x]{500}' } })).not.toBeNull();
    expect(compilarFiltro({ a: { $regex: 'a'.repeat(LIMITES_DO_FILTRO.regex) } })).not.toBeNull();
    expect(compilarFiltro({ a: { $regex: '(a|b)'.repeat(51) } })).not.toBeNull();
    expect(compilarFiltro({ a: { $regex: '(?i)' + 'a'.repeat(252) } })).not.toBeNull();
  });

  test('When a $in or $nin holds more than 100 literals, then it is refused; 100 are accepted', () => {
    const cem = Array.from({ length: 100 }, (_, i) => i);
    expect(corresponde({ 'dados.valor': { $in: cem } })).toBe(false);
    expect(corresponde({ 'dados.valor': { $in: [...cem.slice(1), 150] } })).toBe(true);
    expect(compilarFiltro({ a: { $nin: cem } })).not.toBeNull();
    expect(recusa({ a: { $in: [...cem, 100] } })).toEqual({
      caminho: '/filtro/a/$in',
      mensagem: expect.stringContaining('100'),
    });
    expect(recusa({ a: { $nin: [...cem, 100] } }).caminho).toBe('/filtro/a/$nin');
  });

  test('When filters nest past 8 levels, then the ninth is refused; 8 are accepted', () => {
    const aninhado = (niveis: number): Record<string, unknown> =>
      niveis === 1 ? { tipo: 'pedido.criado' } : { $not: { $not: aninhado(niveis - 2) } };
    expect(corresponde(aninhado(7))).toBe(true);
    const oito = { $and: [aninhado(7)] };
    expect(corresponde(oito)).toBe(true);
    const nove = { $or: [oito] };
    expect(recusa(nove)).toEqual({
      caminho: `/filtro/$or/0/$and/0${'/$not'.repeat(6)}`,
      mensagem: expect.stringContaining('8 levels'),
    });
  });

  test('When the filter holds more than 64 conditions, then the 65th is refused; 64 are accepted', () => {
    const condicoes = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`dados.c${i}`, i]));
    expect(corresponde(condicoes(64))).toBe(false);
    expect(recusa(condicoes(65))).toEqual({ caminho: '/filtro/dados.c64', mensagem: expect.stringContaining('64') });
    // Each operator counts, wherever it sits.
    const operadores = { $or: [condicoes(60), { a: { $gt: 1, $lt: 5, $ne: 3, $exists: true, $eq: 2 } }] };
    expect(recusa(operadores).caminho).toBe('/filtro/$or/1/a/$eq');
  });

  test('When the filter passes 4 KiB as JSON text (UTF-8), then it is refused at /filtro; 4096 bytes are accepted', () => {
    const comTexto = (texto: string) => ({ 'dados.nome': texto });
    const moldura = JSON.stringify(comTexto('')).length;
    expect(compilarFiltro(comTexto('a'.repeat(4096 - moldura)))).not.toBeNull();
    expect(recusa(comTexto('a'.repeat(4097 - moldura)))).toEqual({
      caminho: '/filtro',
      mensagem: expect.stringContaining('4096 bytes'),
    });
    // 'é' is two bytes: counted as UTF-8, not as characters.
    expect(recusa(comTexto('é'.repeat(2100))).caminho).toBe('/filtro');
  });

  test('A stored filter that no longer compiles fails open (every event) instead of breaking publication', () => {
    expect(compilarFiltroGuardado({ a: { $foo: 1 } })).toBeNull();
    expect(compilarFiltroGuardado({ a: 1 })?.({ a: 1 })).toBe(true);
  });
});

describe('iguais', () => {
  test('deep equality of JSON values, key order aside', () => {
    expect(iguais({ a: [1, { b: null }], c: 'x' }, { c: 'x', a: [1, { b: null }] })).toBe(true);
    expect(iguais({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(iguais([1, 2], { 0: 1, 1: 2 })).toBe(false);
    expect(iguais({ 0: 1 }, [1])).toBe(false);
    expect(iguais(null, {})).toBe(false);
    expect(iguais(1, '1')).toBe(false);
  });
});

describe('the work of an evaluation', () => {
  /** An object of the body whose key listings are counted. */
  function contado(alvo: Record<string, unknown>) {
    const contagem = { listagens: 0 };
    const proxy = new Proxy(alvo, {
      ownKeys(t) {
        contagem.listagens += 1;
        return Reflect.ownKeys(t);
      },
    });
    return { proxy, contagem };
  }

  test('When many object literals are compared with one object of the body, then its keys are listed once per evaluation, not once per literal', () => {
    const literais = Array.from({ length: LIMITES_DO_FILTRO.literais }, (_, i) => ({ [`x${i}`]: i }));
    const filtro = {
      $or: [
        { 'dados.o': { $in: literais } },
        { 'dados.o': { $in: literais.map((l) => ({ ...l, y: 0 })) } },
        ...Array.from({ length: 20 }, () => ({ 'dados.o': {} })),
      ],
    };
    const predicado = compilarFiltro(filtro)!;
    const { proxy, contagem } = contado({ a: 1, b: 2, c: 3 });
    expect(predicado({ dados: { o: proxy } })).toBe(false);
    expect(contagem.listagens).toBe(1);
    expect(predicado({ dados: { o: proxy } })).toBe(false);
    expect(contagem.listagens).toBe(2);
  });

  test('When an object of the body changes between evaluations, then each evaluation counts its keys as they are', () => {
    const predicado = compilarFiltro({ 'dados.o': { $in: [{ a: 1 }, { a: 1, b: 2 }] }, 'dados.p': { a: 1 } })!;
    const o: Record<string, number> = { a: 1 };
    expect(predicado({ dados: { o, p: o } })).toBe(true);
    o.b = 2;
    expect(predicado({ dados: { o, p: { a: 1 } } })).toBe(true);
    expect(predicado({ dados: { o, p: o } })).toBe(false);
    expect(iguais(o, { a: 1 })).toBe(false);
    expect(iguais({ b: 2, a: 1 }, o)).toBe(true);
  });
});
