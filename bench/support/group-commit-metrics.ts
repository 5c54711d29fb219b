// Items per statement of the platform's group commits during a row: hub_group_commit_items' sums and
// counts (hub-api's publication; the worker's claims, records, releases and turns), read from the
// services' /metrics before and after. What one statement, one round trip and one commit served.

/** escrita → [items, statements] so far, summed over the services. */
export type Escritas = Map<string, [number, number]>;

const AMOSTRA = /^hub_group_commit_items_(sum|count)\{[^}]*\bescrita="([^"]+)"[^}]*\} (\S+)$/;

export async function lerEscritas(metricas: readonly string[]): Promise<Escritas> {
  const escritas: Escritas = new Map();
  for (const url of metricas) {
    const texto = await fetch(url).then((r) => r.text());
    for (const linha of texto.split('\n')) {
      const m = AMOSTRA.exec(linha);
      if (!m) continue;
      const par = escritas.get(m[2]!) ?? [0, 0];
      par[m[1] === 'sum' ? 0 : 1] += Number(m[3]);
      escritas.set(m[2]!, par);
    }
  }
  return escritas;
}

/** "publicacao 11.2 (893 statements), reivindicacao 8.0 (…)": the mean items per statement of a span. */
export function descreverEscritas(antes: Escritas, depois: Escritas): string {
  const partes: string[] = [];
  for (const [escrita, [itens, vezes]] of depois) {
    const [itensAntes, vezesAntes] = antes.get(escrita) ?? [0, 0];
    const n = vezes - vezesAntes;
    if (n > 0) partes.push(`${escrita} ${((itens - itensAntes) / n).toFixed(1)} (${n} statements)`);
  }
  return partes.join(', ');
}
