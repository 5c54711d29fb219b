import { listaQuery } from '../assinaturas/assinaturas.schemas';
import { listaDeEntregasQuery } from '../entregas/entregas.schemas';

/**
 * The filters of the panel's lists without the subscriber's: a subscribing application's own lists
 * (GET /entregas, GET /assinaturas) are its own by the token, so the same parsing, page and limits.
 */
export const entregasDoAssinanteQuery = listaDeEntregasQuery.omit({ aplicativo_assinante_id: true });
export const assinaturasDoAssinanteQuery = listaQuery.omit({ aplicativo_assinante_id: true });
