/** A POST through the gateway with a master token that answers the created item (throws on a refusal). */
export type Criar = (path: string, body: unknown) => Promise<{ id: string }>;

/**
 * The registry of both tracing tests: a publishing application (`loja`), a subscribing one (`erp`),
 * a type of `loja` with a schema that takes any object, and one subscription of `erp` (3 attempts)
 * to each of `destinos`. Answers the type's id.
 */
export async function registrarRastreamento(
  criar: Criar,
  nomes: { loja: [string, string]; erp: [string, string]; tipo: string },
  destinos: string[],
): Promise<string> {
  const loja = await criar('/aplicativo', { nome: nomes.loja[0], client_id: nomes.loja[1] });
  const erp = await criar('/aplicativo', { nome: nomes.erp[0], client_id: nomes.erp[1] });
  const tipoId = (await criar('/tipo-de-evento', { nome: nomes.tipo, aplicativo_id: loja.id })).id;
  await criar('/versao-de-esquema', { tipo_de_evento_id: tipoId, esquema: { type: 'object' } });
  for (const url_de_destino of destinos)
    await criar('/assinatura', {
      aplicativo_assinante_id: erp.id,
      tipo_de_evento_id: tipoId,
      versao_do_esquema: 1,
      url_de_destino,
      maximo_de_tentativas: 3,
    });
  return tipoId;
}
