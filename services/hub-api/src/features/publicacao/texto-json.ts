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
