import { RE2JS } from 're2js';
import { type Contexto, indecidivel, mudanca } from './contexto';
import { type Erro, eObjeto, filho, igual, type No, numero, universal, valor } from './no';
import { subconjunto } from './subconjunto';
import { esquemaDoValor } from './valores';

const propriedades = (no: No): string[] => {
  const p = valor(no, 'properties');
  return eObjeto(p) ? Object.keys(p) : [];
};
const padroes = (no: No): string[] => {
  const p = valor(no, 'patternProperties');
  return eObjeto(p) ? Object.keys(p) : [];
};
const requeridas = (no: No): string[] => {
  const r = valor(no, 'required');
  return Array.isArray(r) ? r.filter((x): x is string => typeof x === 'string') : [];
};
const adicional = (no: No): No => filho(no, 'additionalProperties');

/** Whether a property name matches a pattern as the hub's ajv reads it (RE2); an unreadable one matches. */
function casa(padrao: string, nome: string): boolean {
  try {
    return RE2JS.compile(padrao).test(nome);
  } catch {
    return true;
  }
}

/** The subschemas one node applies to a property name: properties and matching patterns, else additionalProperties. */
function esquemasPara(no: No, nome: string): No[] {
  const proprios = propriedades(no).includes(nome) ? [filho(no, 'properties', nome)] : [];
  const dosPadroes = padroes(no)
    .filter((p) => casa(p, nome))
    .map((p) => filho(no, 'patternProperties', p));
  const todos = [...proprios, ...dosPadroes];
  return todos.length > 0 ? todos : [adicional(no)];
}

const explicita = (no: No, nome: string) => propriedades(no).includes(nome) || padroes(no).some((p) => casa(p, nome));

function porNome(a: No[], b: No, nome: string, ctx: Contexto): Erro[] {
  const deA = a.flatMap((c) => esquemasPara(c, nome));
  const erros = esquemasPara(b, nome).flatMap((x) => subconjunto(deA, x, ctx));
  if (erros.length === 0) return erros;
  const emA = a.some((c) => explicita(c, nome));
  const emB = explicita(b, nome);
  if (emA && emB) return erros;
  const lugarB = emB ? `${b.caminho}/properties/${nome}` : `${b.caminho}/additionalProperties`;
  const lugarA = emA ? `${a[0]?.caminho ?? ''}/properties/${nome}` : `${a[0]?.caminho ?? ''}/additionalProperties`;
  if (!emA) {
    const aberto = a.every((c) => universal(adicional(c)));
    return [
      mudanca(
        ctx,
        lugarA,
        lugarB,
        `property added: ${nome}${aberto ? ' (the old object is open: an older document may hold it with any value)' : ''}`,
        `property removed: ${nome}${aberto ? ' (the new object is open: a new document may hold it with any value)' : ''}`,
      ),
    ];
  }
  const fechado = adicional(b).s === false;
  return [
    mudanca(
      ctx,
      lugarA,
      lugarB,
      `property removed: ${nome}${fechado ? ' (additionalProperties is false)' : ''}`,
      `property added: ${nome}${fechado ? ' (the old schema does not allow it)' : ''}`,
    ),
  ];
}

/** The names no explicit property covers: B's patterns and B's additionalProperties, against one conjunct of A. */
function outrosNomes(c: No | undefined, b: No, ctx: Contexto): Erro[] {
  const erros: Erro[] = [];
  const deB = padroes(b);
  for (const p of deB) {
    const bp = filho(b, 'patternProperties', p);
    if (!c) erros.push(...subconjunto([], bp, ctx));
    else if (padroes(c).includes(p)) erros.push(...subconjunto([filho(c, 'patternProperties', p)], bp, ctx));
    else {
      erros.push(...subconjunto([adicional(c)], bp, ctx));
      for (const q of padroes(c)) erros.push(...subconjunto([filho(c, 'patternProperties', q)], bp, ctx));
    }
  }
  const adB = adicional(b);
  if (universal(adB)) return erros;
  const adA = c ? adicional(c) : undefined;
  if (!adA || universal(adA)) {
    erros.push(
      mudanca(
        ctx,
        c ?? b,
        `${b.caminho}/additionalProperties`,
        'additionalProperties added: properties the old object left open are now refused or constrained',
        'additionalProperties removed: properties the old object refused or constrained are now open',
      ),
    );
    return erros;
  }
  erros.push(...subconjunto([adA], adB, ctx));
  for (const q of padroes(c!))
    if (!deB.includes(q)) erros.push(...subconjunto([filho(c!, 'patternProperties', q)], adB, ctx));
  return erros;
}

/** The object slice: property by property, then the other names, then required and the counts. */
export function objeto(a: No[], b: No, ctx: Contexto): Erro[] {
  const erros: Erro[] = [];
  const nomes = new Set([...a.flatMap(propriedades), ...propriedades(b), ...a.flatMap(requeridas), ...requeridas(b)]);
  ctx.profundidade += 1;
  try {
    for (const nome of nomes) erros.push(...porNome(a, b, nome, ctx));
    erros.push(...primeiroQueProva(a, (c) => outrosNomes(c, b, ctx)));
    const nomeadas = valor(b, 'propertyNames');
    if (nomeadas !== undefined) erros.push(...nomesDasPropriedades(a, b, ctx));
  } finally {
    ctx.profundidade -= 1;
  }
  const deA = new Set(a.flatMap(requeridas));
  for (const r of requeridas(b)) {
    if (!deA.has(r))
      erros.push(
        mudanca(
          ctx,
          `${(a[0] ?? b).caminho}/required`,
          `${b.caminho}/required`,
          `required property added: ${r}`,
          `required property removed: ${r}`,
        ),
      );
  }
  erros.push(...contagens(a, b, deA.size, ctx), ...dependencias(a, b, deA, ctx));
  return erros;
}

/** The first conjunct of A whose check comes out clean, else the findings of the first. */
function primeiroQueProva(a: No[], verificar: (c: No | undefined) => Erro[]): Erro[] {
  if (a.length === 0) return verificar(undefined);
  let primeiro: Erro[] | undefined;
  for (const c of a) {
    const erros = verificar(c);
    if (erros.length === 0) return [];
    primeiro ??= erros;
  }
  return primeiro ?? [];
}

function nomesDasPropriedades(a: No[], b: No, ctx: Contexto): Erro[] {
  const deB = filho(b, 'propertyNames');
  return primeiroQueProva(a, (c) => {
    if (!c) return [mudanca(ctx, b, deB, 'propertyNames added', 'propertyNames removed')];
    if (valor(c, 'propertyNames') !== undefined && subconjunto([filho(c, 'propertyNames')], deB, ctx).length === 0)
      return [];
    const fechado = adicional(c).s === false && padroes(c).length === 0;
    if (fechado && propriedades(c).every((n) => subconjunto([esquemaDoValor(n, c)], deB, ctx).length === 0)) return [];
    return [mudanca(ctx, c, deB, 'propertyNames added or narrowed', 'propertyNames removed or widened')];
  });
}

function contagens(a: No[], b: No, requeridasEmA: number, ctx: Contexto): Erro[] {
  const erros: Erro[] = [];
  const minB = numero(b, 'minProperties');
  const minA = Math.max(requeridasEmA, ...a.map((c) => numero(c, 'minProperties') ?? 0));
  if (minB !== undefined && minA < minB)
    erros.push(
      mudanca(
        ctx,
        `${(a[0] ?? b).caminho}/minProperties`,
        `${b.caminho}/minProperties`,
        'minProperties raised',
        'minProperties lowered',
      ),
    );
  const maxB = numero(b, 'maxProperties');
  if (maxB !== undefined) {
    let maxA = Math.min(...a.map((c) => numero(c, 'maxProperties') ?? Number.POSITIVE_INFINITY));
    for (const c of a)
      if (adicional(c).s === false && padroes(c).length === 0) maxA = Math.min(maxA, propriedades(c).length);
    if (maxA > maxB)
      erros.push(
        mudanca(
          ctx,
          `${(a[0] ?? b).caminho}/maxProperties`,
          `${b.caminho}/maxProperties`,
          'maxProperties lowered',
          'maxProperties raised',
        ),
      );
  }
  return erros;
}

/** dependentRequired (draft-07: dependencies with arrays); dependencies with schemas only when A has the same. */
function dependencias(a: No[], b: No, requeridasEmA: Set<string>, ctx: Contexto): Erro[] {
  const erros: Erro[] = [];
  for (const chave of ['dependentRequired', 'dependencies']) {
    const deB = valor(b, chave);
    if (!eObjeto(deB)) continue;
    for (const [gatilho, exigidas] of Object.entries(deB)) {
      const onde = `${b.caminho}/${chave}/${gatilho}`;
      if (!Array.isArray(exigidas)) {
        if (!a.some((c) => igual((valor(c, chave) as Record<string, unknown> | undefined)?.[gatilho], exigidas)))
          erros.push(indecidivel(ctx, a[0] ?? b, onde, `the schema of ${chave}/${gatilho} changed or is new`));
        continue;
      }
      const provado = exigidas.every(
        (e) =>
          requeridasEmA.has(e) ||
          a.some((c) =>
            ['dependentRequired', 'dependencies'].some((k) => {
              const lista = (valor(c, k) as Record<string, unknown> | undefined)?.[gatilho];
              return Array.isArray(lista) && lista.includes(e);
            }),
          ),
      );
      if (!provado)
        erros.push(
          mudanca(
            ctx,
            `${(a[0] ?? b).caminho}${onde.slice(b.caminho.length)}`,
            onde,
            `dependentRequired added: ${gatilho}`,
            `dependentRequired removed: ${gatilho}`,
          ),
        );
    }
  }
  return erros;
}
