import { buildOpenApi } from './openapi';
import { operationIdOf, plural } from './operation-id';

test('When routes follow the usual shapes, then their operationIds are the Portuguese verb and noun a client reads', () => {
  const named = [
    ['get', '/assinatura'],
    ['post', '/assinatura'],
    ['get', '/assinatura/filtro'],
    ['get', '/assinatura/autocomplete'],
    ['get', '/assinatura/:id'],
    ['patch', '/assinatura/:id'],
    ['delete', '/assinatura/:id'],
    ['post', '/destino/:id/pausar'],
    ['get', '/fila/:nome/mensagens'],
    ['get', '/evento/resumo'],
    ['get', '/perfil-de-acesso'],
    ['get', '/versao-de-esquema/filtro'],
    ['get', '/evento-recusado'],
    ['post', '/token/aplicativo'],
  ].map(([method, path]) => operationIdOf(method!, path!));
  expect(named).toEqual([
    'listarAssinaturas',
    'criarAssinatura',
    'filtrarAssinaturas',
    'autocompletarAssinaturas',
    'obterAssinatura',
    'alterarAssinatura',
    'removerAssinatura',
    'pausarDestino',
    'listarMensagensDeFila',
    'obterResumoDeEventos',
    'listarPerfisDeAcesso',
    'filtrarVersoesDeEsquema',
    'listarEventosRecusados',
    'criarTokenAplicativo',
  ]);
});

test('When a noun is made plural, then the words before "de" take the plural by the usual endings', () => {
  expect(
    ['funcao', 'colaborador', 'perfil-de-acesso', 'tipo-de-evento', 'evento-recusado', 'canal', 'item'].map(plural),
  ).toEqual([
    'funcoes',
    'colaboradores',
    'perfis-de-acesso',
    'tipos-de-evento',
    'eventos-recusados',
    'canais',
    'itens',
  ]);
});

test('When a route names its operation, then the document uses that name instead of the rule', () => {
  const document = buildOpenApi('t', [
    { method: 'post', path: '/eventos', operationId: 'publicarEvento', summary: 'Publish', tag: 'Eventos' },
    { method: 'get', path: '/eventos/:id', summary: 'One', tag: 'Eventos' },
  ]);
  expect(document.paths['/eventos']!.post).toMatchObject({ operationId: 'publicarEvento' });
  expect(document.paths['/eventos/{id}']!.get).toMatchObject({ operationId: 'obterEventos' });
});

test('When two routes of a service would share an operationId, then building the document fails naming both', () => {
  expect(() =>
    buildOpenApi('t', [
      { method: 'get', path: '/evento/:id', summary: 'One', tag: 'Evento' },
      { method: 'get', path: '/evento/:codigo', operationId: 'obterEvento', summary: 'Same', tag: 'Evento' },
    ]),
  ).toThrow('GET /evento/{codigo} and GET /evento/{id} are both obterEvento: name one (operationId)');
});
