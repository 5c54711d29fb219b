/**
 * The exact text of a top-level member of a JSON object. JSON.parse turns numbers into doubles (a
 * 20-digit integer loses digits), so what subscribers must receive as sent is cut out of the text
 * instead. The text must be valid JSON (it was parsed already); the LAST member of that name
 * wins, as with JSON.parse. Undefined when the text is not an object or has no such member.
 */
export function textoDoMembro(json: string, nome: string): string | undefined {
  let i = espacos(json, 0);
  if (json[i] !== '{') return undefined;
  let achado: string | undefined;
  i = espacos(json, i + 1);
  while (i < json.length && json[i] !== '}') {
    const fimDaChave = fimDaString(json, i);
    // Keys may be escaped ("d\u0061dos" is "dados"), so compare them decoded.
    const chave = JSON.parse(json.slice(i, fimDaChave)) as string;
    i = espacos(json, espacos(json, fimDaChave) + 1); // past the ':'
    const fimDoValor = fimDeValor(json, i);
    if (chave === nome) achado = json.slice(i, fimDoValor);
    i = espacos(json, fimDoValor);
    if (json[i] === ',') i = espacos(json, i + 1);
  }
  return achado;
}

const ESPACO = new Set([' ', '\t', '\n', '\r']);

function espacos(json: string, i: number): number {
  while (i < json.length && ESPACO.has(json[i]!)) i += 1;
  return i;
}

/** Index just past the string that starts (with its quote) at i. */
function fimDaString(json: string, i: number): number {
  let j = i + 1;
  while (j < json.length) {
    const c = json[j];
    if (c === '\\') j += 2;
    else if (c === '"') return j + 1;
    else j += 1;
  }
  throw new Error('unterminated JSON string');
}

/** Index just past the value that starts at i. */
function fimDeValor(json: string, i: number): number {
  const c = json[i];
  if (c === '"') return fimDaString(json, i);
  if (c === '{' || c === '[') {
    let profundidade = 0;
    let j = i;
    while (j < json.length) {
      const d = json[j];
      if (d === '"') {
        j = fimDaString(json, j);
        continue;
      }
      if (d === '{' || d === '[') profundidade += 1;
      else if (d === '}' || d === ']') {
        profundidade -= 1;
        if (profundidade === 0) return j + 1;
      }
      j += 1;
    }
    throw new Error('unterminated JSON structure');
  }
  // A number, true, false or null: up to the next delimiter.
  let j = i;
  while (j < json.length && !ESPACO.has(json[j]!) && json[j] !== ',' && json[j] !== '}' && json[j] !== ']') j += 1;
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
    const c = json[i];
    if (c === '"') i = fimDaString(json, i) - 1;
    else if (c === ':') membros += 1;
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
