/**
 * The OpenAPI `operationId` of a route, in the domain's Portuguese, from its method and path: what
 * a generated client names its methods. One rule for every service, so a new route is named like
 * its neighbours; a route whose path says too little names itself (`operationId` in its spec).
 *
 *   GET    /assinatura                listarAssinaturas
 *   POST   /assinatura                criarAssinatura
 *   GET    /assinatura/filtro         filtrarAssinaturas
 *   GET    /assinatura/autocomplete   autocompletarAssinaturas
 *   GET    /assinatura/:id            obterAssinatura
 *   PATCH  /assinatura/:id            alterarAssinatura
 *   DELETE /assinatura/:id            removerAssinatura
 *   POST   /destino/:id/pausar        pausarDestino
 *   GET    /fila/:nome/mensagens      listarMensagensDeFila
 *   GET    /evento/resumo             obterResumoDeEventos
 *
 * Anything else: the method's verb and every fixed segment (`POST /token/aplicativo`: criarTokenAplicativo).
 * The name changes only when the path does, which is already a change every client sees.
 */
export function operationIdOf(method: string, path: string): string {
  const segments = path.split('/').filter(Boolean);
  const fixed = segments.filter((s) => !s.startsWith(':'));
  const [resource = 'raiz', second, third] = segments;
  const param = (s: string | undefined) => s?.startsWith(':') ?? false;
  const one = pascal(resource);
  const many = pascal(plural(resource));
  if (segments.length === 1 && method === 'get') return `listar${many}`;
  if (segments.length === 1 && method === 'post') return `criar${one}`;
  if (segments.length === 2 && method === 'get' && second === 'filtro') return `filtrar${many}`;
  if (segments.length === 2 && method === 'get' && second === 'autocomplete') return `autocompletar${many}`;
  if (segments.length === 2 && param(second)) {
    const verb = { get: 'obter', patch: 'alterar', put: 'alterar', delete: 'remover' }[method];
    if (verb) return `${verb}${one}`;
  }
  if (segments.length === 2 && method === 'get' && !param(second)) return `obter${pascal(second!)}De${many}`;
  if (segments.length === 3 && param(second) && !param(third)) {
    if (method === 'post') return `${camel(third!)}${one}`;
    if (method === 'get') return `listar${pascal(third!)}De${one}`;
  }
  const verb = { get: 'obter', post: 'criar', patch: 'alterar', put: 'alterar', delete: 'remover' }[method] ?? method;
  return verb + fixed.map(pascal).join('');
}

const words = (segment: string) => segment.split(/[^A-Za-z0-9]+/).filter(Boolean);
const pascal = (segment: string) =>
  words(segment)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');
const camel = (segment: string) => {
  const p = pascal(segment);
  return p[0]!.toLowerCase() + p.slice(1);
};

/**
 * The plural of a path's noun, kebab-case: every word before the first `de`/`da`/`do` takes the
 * plural (perfil-de-acesso → perfis-de-acesso, evento-recusado → eventos-recusados).
 */
export function plural(segment: string): string {
  const parts = segment.split('-');
  const end = parts.findIndex((w) => ['de', 'da', 'do', 'das', 'dos'].includes(w));
  return parts.map((w, i) => (end === -1 || i < end ? pluralWord(w) : w)).join('-');
}

function pluralWord(word: string): string {
  if (/s$/.test(word)) return word;
  if (/ao$/.test(word)) return word.replace(/ao$/, 'oes');
  if (/il$/.test(word)) return word.replace(/l$/, 's');
  if (/[aeou]l$/.test(word)) return word.replace(/l$/, 'is');
  if (/[rz]$/.test(word)) return `${word}es`;
  if (/m$/.test(word)) return word.replace(/m$/, 'ns');
  return `${word}s`;
}
