import { api } from '../http-client';
import type { Platform } from '../platform';
import { waitFor } from '@hub/testing/src/wait';
import { type OpenApiDocument, operationsOf, resourceOf } from './operations';
import type { Fixtures } from './valid-input';

export const COMPANY_DOMAIN = 'empresa.com.br';

export interface Callers {
  master: string;
  application: string;
}

const created = (what: string, response: { status: number; body: unknown }) => {
  if (response.status !== 201 && response.status !== 200)
    throw new Error(`could not create ${what}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as { id: string } & Record<string, unknown>;
};

/**
 * One of each resource, created through the gateway as a client would, so that hostile values in one
 * place meet a request that is valid everywhere else (and reach the code behind "not found").
 */
export async function createFixtures(
  platform: Platform,
  document: OpenApiDocument,
): Promise<{ fixtures: Fixtures; callers: Callers }> {
  const gateway = platform.gatewayUrl;
  const clientId = 'varredura-publicador';
  const callers = {
    master: await platform.userToken(`admin.varredura@${COMPANY_DOMAIN}`, { nome: 'Admin da varredura', master: true }),
    application: await platform.applicationToken(clientId),
  };
  const post = (path: string, body: unknown) => api(gateway, callers.master, 'POST', path, body);

  const funcao = created('a function', await post('/funcao', { nome: 'Função da varredura' }));
  const perfil = created(
    'an access profile',
    await post('/perfil-de-acesso', { nome: 'Perfil da varredura', permissoes: { monitoramento: { ler: true } } }),
  );
  const email = `colaborador.varredura@${COMPANY_DOMAIN}`;
  const acesso = created('an access', await post('/auth', { email, perfil: 'colaborador' }));
  // The collaborator comes from the identity service, over RabbitMQ, as in production.
  const termoauthId = '0193a000-0000-7000-8000-00000000c0de';
  const sync = await api(platform.urls['identity-dev'], undefined, 'PUT', `/colaboradores/${termoauthId}`, {
    email,
    nome: 'Colaborador da varredura',
    funcao_id: funcao.id,
    ativo: true,
  });
  if (sync.status !== 200) throw new Error(`identity-dev refused the collaborator: ${sync.status}`);
  await waitFor(async () => (await api(gateway, callers.master, 'GET', `/auth/${acesso.id}`)).body.vinculado === true, {
    what: 'the collaborator to be linked to its access',
  });

  const aplicativo = created(
    'an application',
    await post('/aplicativo', { nome: 'Publicador da varredura', client_id: clientId }),
  );
  const tipo = created(
    'an event type',
    await post('/tipo-de-evento', { nome: 'varredura.criado', aplicativo_id: aplicativo.id }),
  );
  const versao = created(
    'a schema version',
    await post('/versao-de-esquema', {
      tipo_de_evento_id: tipo.id,
      esquema: { type: 'object', properties: { n: { type: 'integer' } } },
    }),
  );
  const assinatura = created(
    'a subscription',
    await post('/assinatura', {
      aplicativo_assinante_id: aplicativo.id,
      tipo_de_evento_id: tipo.id,
      versao_do_esquema: 1,
      url_de_destino: 'http://127.0.0.1:9/varredura',
    }),
  );

  const fixtures: Fixtures = {
    companyDomain: COMPANY_DOMAIN,
    ids: {
      auth: acesso.id,
      colaborador: acesso.id,
      'perfil-de-acesso': perfil.id,
      funcao: funcao.id,
      aplicativo: aplicativo.id,
      'tipo-de-evento': tipo.id,
      'versao-de-esquema': versao.id,
      assinatura: assinatura.id,
    },
    fields: {
      perfil: 'colaborador',
      perfil_de_acesso_id: perfil.id,
      funcao_id: funcao.id,
      aplicativo_id: aplicativo.id,
      aplicativo_assinante_id: aplicativo.id,
      aplicativo_publicador_id: aplicativo.id,
      tipo_de_evento_id: tipo.id,
      tipo_de_evento_nome: 'varredura.criado',
      versao_do_esquema: 1,
      versao: 1,
      assinatura_id: assinatura.id,
      entidade_id: 'varredura-1',
      dados: { n: 1 },
    },
  };

  const operations = operationsOf(document);
  if (operations.some((o) => o.key === 'POST /eventos')) {
    const evento = await api(gateway, callers.application, 'POST', '/eventos', {
      tipo_de_evento_id: tipo.id,
      versao_do_esquema: 1,
      entidade_id: 'varredura-1',
      dados: { n: 1 },
    });
    const body = created('an event', evento);
    fixtures.ids.evento = fixtures.ids.eventos = body.id;
    fixtures.fields.evento_id = body.id;
  }
  // Any other resource: the first item of its list, when it lists any (new routes need no change here).
  for (const resource of new Set(operations.filter((o) => o.path.includes('{id}')).map((o) => resourceOf(o.path)))) {
    if (fixtures.ids[resource] || !operations.some((o) => o.key === `GET /${resource}`)) continue;
    const list = await api<{ itens?: { id?: string }[] }>(gateway, callers.master, 'GET', `/${resource}`);
    const id = list.body?.itens?.[0]?.id;
    if (id) fixtures.ids[resource] = id;
  }
  // The application subscribes to its own type: the event's delivery is one of its own (/entregas).
  if (fixtures.ids.entrega && !fixtures.ids.entregas) fixtures.ids.entregas = fixtures.ids.entrega;
  // Its subscription is its own too (/assinaturas/{id}).
  if (!fixtures.ids.assinaturas) fixtures.ids.assinaturas = assinatura.id;
  return { fixtures, callers };
}
