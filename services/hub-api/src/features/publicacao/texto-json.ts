/**
 * The exact text of a top-level member of a JSON object. JSON.parse turns numbers into doubles (a
 * 20-digit integer loses digits), so what subscribers must receive as sent is cut out of the text
 * instead. The text must be valid JSON (it was parsed already); the LAST member of that name
 * wins, as with JSON.parse. Undefined when the text is not an object or has no such member.
 */
export function textoDoMembro(json: string, nome: string): string | undefined {
  let i = espacos(json, 0);
  if (json.charCodeAt(i) !== ABRE_OBJETO) return undefined;
  let achado: string | undefined;
  i = espacos(json, i + 1);
  while (i < json.length && json.charCodeAt(i) !== FECHA_OBJETO) {
    const fimDaChave = fimDaString(json, i);
    // Keys may be escaped ("d\u0061dos" is "dados"), so compare them decoded.
    const chave = JSON.parse(json.slice(i, fimDaChave)) as string;
    i = espacos(json, espacos(json, fimDaChave) + 1); // past the ':'
    const fimDoValor = fimDeValor(json, i);
    if (chave === nome) achado = json.slice(i, fimDoValor);
    i = espacos(json, fimDoValor);
    if (json.charCodeAt(i) === VIRGULA) i = espacos(json, i + 1);
  }
  return achado;
}

// The text is scanned by character code, and strings are skipped with indexOf: most of a body's
// characters are inside strings.
const ASPAS = 0x22;
const BARRA_INVERTIDA = 0x5c;
const ABRE_OBJETO = 0x7b;
const FECHA_OBJETO = 0x7d;
const ABRE_LISTA = 0x5b;
const FECHA_LISTA = 0x5d;
const VIRGULA = 0x2c;
const DOIS_PONTOS = 0x3a;

/** JSON's white space: space, tab, line feed, carriage return. */
const espaco = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function espacos(json: string, i: number): number {
  while (i < json.length && espaco(json.charCodeAt(i))) i += 1;
  return i;
}

/** Index just past the string that starts (with its quote) at i. */
function fimDaString(json: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const aspas = json.indexOf('"', j);
    if (aspas === -1) throw new Error('unterminated JSON string');
    // Escaped when an odd number of backslashes precede it.
    let barras = 0;
    while (json.charCodeAt(aspas - 1 - barras) === BARRA_INVERTIDA) barras += 1;
    if (barras % 2 === 0) return aspas + 1;
    j = aspas + 1;
  }
}

/** Index just past the value that starts at i. */
function fimDeValor(json: string, i: number): number {
  const c = json.charCodeAt(i);
  if (c === ASPAS) return fimDaString(json, i);
  if (c === ABRE_OBJETO || c === ABRE_LISTA) {
    let profundidade = 0;
    let j = i;
    while (j < json.length) {
      const d = json.charCodeAt(j);
      if (d === ASPAS) {
        j = fimDaString(json, j);
        continue;
      }
      if (d === ABRE_OBJETO || d === ABRE_LISTA) profundidade += 1;
      else if (d === FECHA_OBJETO || d === FECHA_LISTA) {
        profundidade -= 1;
        if (profundidade === 0) return j + 1;
      }
      j += 1;
    }
    throw new Error('unterminated JSON structure');
  }
  // A number, true, false or null: up to the next delimiter.
  let j = i;
  for (; j < json.length; j += 1) {
    const d = json.charCodeAt(j);
    if (espaco(d) || d === VIRGULA || d === FECHA_OBJETO || d === FECHA_LISTA) break;
  }
  return j;
}

/**
 * How many object members the JSON text holds, counted on the text (each ':' outside strings), without
 * recursion: a text may nest deeper than a call stack. With `membrosDoValor` of its parse it tells a
 * text whose objects repeat a name, whose earlier copies JSON.parse dropped and no check has seen.
 */
export function membrosDoTexto(json: string): number {
  let membros = 0;
  for (let i = 0; i < json.length; i += 1) {
    const c = json.charCodeAt(i);
    if (c === ASPAS) i = fimDaString(json, i) - 1;
    else if (c === DOIS_PONTOS) membros += 1;
  }
  return membros;
}

/** How many object members a parsed value holds (its depth is bounded by the body guard). */
export function membrosDoValor(valor: unknown): number {
  if (Array.isArray(valor)) return valor.reduce((soma: number, item) => soma + membrosDoValor(item), 0);
  if (typeof valor !== 'object' || valor === null) return 0;
  let membros = 0;
  for (const item of Object.values(valor)) membros += 1 + membrosDoValor(item);
  return membros;
}
