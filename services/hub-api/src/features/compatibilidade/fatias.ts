import { type Contexto, caminhoNovo, indecidivel, mudanca } from './contexto';
import { lista } from './lista';
import { ANOTACOES, type Erro, eObjeto, igual, type No, sem, temReferencia, valor } from './no';
import { numeros } from './numeros';
import { objeto } from './objeto';
import { subconjunto } from './subconjunto';
import { texto } from './texto';
import { esquemaDoValor, mostrar, type Tipo, tiposDe, tiposDeTodos, valoresDe, valoresDoNo } from './valores';

/** The keywords the slices read on the B side; any other assertion in B is refused unless A has it too. */
const LIDAS = new Set([
  'type',
  'enum',
  'const',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'items',
  'prefixItems',
  'additionalItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'properties',
  'required',
  'additionalProperties',
  'patternProperties',
  'minProperties',
  'maxProperties',
  'propertyNames',
  'dependentRequired',
  'dependencies',
  'x-valor',
]);

/** Keywords whose meaning does not depend on their siblings: the same one in A proves it in B. */
const AUTONOMAS = new Set(['if', 'then', 'else', 'dependentSchemas', 'contains', 'minContains', 'maxContains']);

function naoLidas(a: No[], b: No, ctx: Contexto): Erro[] {
  const s = b.s as Record<string, unknown>;
  const erros: Erro[] = [];
  for (const chave of Object.keys(s)) {
    if (LIDAS.has(chave) || ANOTACOES.has(chave)) continue;
    const igualEmA = a.some((c) => eObjeto(c.s) && igual(c.s[chave], s[chave])) && !temReferencia(s[chave]);
    const grupo = chave === 'if' || chave === 'then' || chave === 'else' ? ['if', 'then', 'else'] : [chave];
    const grupoIgual = grupo.every((k) => a.some((c) => igual(valor(c, k), s[k])));
    if (AUTONOMAS.has(chave) && igualEmA && grupoIgual) continue;
    erros.push(
      indecidivel(ctx, caminhoNovo(ctx, a, b), `${b.caminho}/${chave}`, `the keyword ${chave} changed or is new`),
    );
  }
  return erros;
}

/** A and B with no combinator left at their top: compared by value, or type by type. */
export function fatias(a: No[], b: No, ctx: Contexto): Erro[] {
  const erros = naoLidas(a, b, ctx);
  const valores = valoresDe(a);
  const deB = valoresDoNo(b);
  if (valores) {
    for (const v of valores) {
      if (deB && !deB.some((w) => igual(v, w))) {
        erros.push(
          mudanca(
            ctx,
            a[0]!,
            `${b.caminho}/enum`,
            `enum value removed: ${mostrar(v)}`,
            `enum value added: ${mostrar(v)}`,
          ),
        );
        continue;
      }
      erros.push(...subconjunto([esquemaDoValor(v, a[0]!)], sem(b, 'enum', 'const'), ctx));
    }
    return erros;
  }
  const tipos = tiposDeTodos(a);
  if (deB) return [...erros, ...enumNovo(a, b, tipos, deB, ctx)];
  const deBTipos = tiposDe(b);
  for (const tipo of fatiasDe(tipos)) {
    const aceita = deBTipos.has(tipo);
    if (!aceita) {
      const seB =
        tipo === 'number' && deBTipos.has('integer')
          ? 'type narrowed: number to integer'
          : `type narrowed: ${tipo} no longer accepted`;
      const seA =
        tipo === 'number' && deBTipos.has('integer')
          ? 'type widened: integer to number'
          : `type widened: ${tipo} now accepted`;
      erros.push(mudanca(ctx, `${(a[0] ?? b).caminho}/type`, `${b.caminho}/type`, seB, seA));
      continue;
    }
    erros.push(...porTipo(tipo, a, b, ctx));
  }
  return erros;
}

/** `number` covers the integers: an `integer` slice only when A lets integers alone through. */
function fatiasDe(tipos: Set<Tipo>): Tipo[] {
  return [...tipos].filter((t) => !(t === 'integer' && tipos.has('number')));
}

function porTipo(tipo: Tipo, a: No[], b: No, ctx: Contexto): Erro[] {
  switch (tipo) {
    case 'integer':
    case 'number':
      return numeros(a, b, tipo, ctx);
    case 'string':
      return texto(a, b, ctx);
    case 'array':
      return lista(a, b, ctx);
    case 'object':
      return objeto(a, b, ctx);
    default:
      return [];
  }
}

/** B has an enum or const and A is not finite: only null and boolean can be listed whole. */
function enumNovo(a: No[], b: No, tipos: Set<Tipo>, deB: unknown[], ctx: Contexto): Erro[] {
  const erros: Erro[] = [];
  for (const tipo of fatiasDe(tipos)) {
    if (tipo === 'null' && deB.includes(null)) continue;
    if (tipo === 'boolean' && deB.includes(true) && deB.includes(false)) continue;
    const chave = Object.hasOwn(b.s as object, 'const') ? 'const' : 'enum';
    erros.push(
      mudanca(
        ctx,
        `${(a[0] ?? b).caminho}/${chave}`,
        `${b.caminho}/${chave}`,
        `${chave} added (${tipo} values outside it no longer accepted)`,
        `${chave} removed (${tipo} values outside it now accepted)`,
      ),
    );
  }
  return erros;
}
