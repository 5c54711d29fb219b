import { createGuards, createTokenVerifier, forgetOnAccessChange, RemoteAccessResolver } from '@hub/auth';
import type { Broker } from '@hub/broker';
import { ApiRouter, createHttpApp, listen, type RunningServer } from '@hub/http';
import { createLogger } from '@hub/log';
import { connectTestBroker, startTestIdentity, type TestIdentity, waitFor } from '@hub/testing';
import pg from 'pg';
import request from 'supertest';
import { startAccessForTests, type TestAccess } from './access.test-support';

// The guard package as another service uses it, against a running access service.
let broker: Broker;
let identity: TestIdentity;
let access: TestAccess;
let other: RunningServer;

beforeAll(async () => {
  broker = await connectTestBroker('remote-guard');
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  const logger = createLogger('outro-servico');
  const resolver = new RemoteAccessResolver(access.url, logger, 60_000);
  await forgetOnAccessChange(broker, resolver, 'outro-servico');
  const guards = createGuards(
    createTokenVerifier({
      jwksUrl: identity.jwksUrl,
      issuer: identity.issuer,
      audience: identity.audience,
      algorithms: ['EdDSA'],
    }),
    resolver,
  );
  const router = new ApiRouter()
    .route(
      { method: 'get', path: '/monitorar', summary: 'x', tag: 'x', ...guards.permission('monitoramento', 'ler') },
      () => ({ ok: true }),
    )
    .route({ method: 'get', path: '/so-master', summary: 'x', tag: 'x', ...guards.master() }, () => ({ ok: true }));
  other = await listen(createHttpApp({ service: 'outro-servico', logger, routers: [router] }), 0);
});
afterAll(async () => {
  await other?.close();
  await access?.close();
  await identity?.close();
  await broker?.close();
});

const get = (path: string, token: string) => request(other.url).get(path).set('authorization', `Bearer ${token}`);

describe("Another service's guard, resolving permissions through the access service", () => {
  it('When the access is deactivated, then the other service refuses it within one second, though its cache lives a minute', async () => {
    const token = await access.userWith('operador@empresa.com.br', { monitoramento: { ler: true } });
    await get('/monitorar', token).expect(200);
    await get('/monitorar', token).expect(200); // now cached
    await access.deactivate('operador@empresa.com.br');
    const started = Date.now();
    await waitFor(async () => (await get('/monitorar', token)).status === 403, { timeoutMs: 1000, intervalMs: 20 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await get('/monitorar', token)).body.codigo).toBe('acesso_inativo');
  });

  it('When the caller lacks the permission, then 403; without token, 401', async () => {
    const token = await access.userWith('outro@empresa.com.br', { colaboradores: { ler: true } });
    expect((await get('/monitorar', token).expect(403)).body.codigo).toBe('sem_permissao');
    await request(other.url).get('/monitorar').expect(401);
  });

  it('When an unregistered non-master calls, then 403 acesso_nao_cadastrado', async () => {
    const token = await identity.userToken({ email: 'ninguem@empresa.com.br' });
    expect((await get('/monitorar', token).expect(403)).body.codigo).toBe('acesso_nao_cadastrado');
  });

  it('When a non-master holds every permission, then a master-only route is still 403; a master passes', async () => {
    const all = { ler: true, criar: true, editar: true, deletar: true };
    const token = await access.userWith('quase@empresa.com.br', {
      aplicativos: all,
      colaboradores: all,
      configuracoes: all,
      monitoramento: all,
    });
    await get('/monitorar', token).expect(200);
    await get('/so-master', token).expect(403);
    await get('/so-master', await access.masterToken()).expect(200);
  });

  it("When a profile's permissions change, then every cached caller of it is dropped at once", async () => {
    const token = await access.userWith('perfilado@empresa.com.br', { monitoramento: { ler: true } });
    await get('/monitorar', token).expect(200);
    const masterToken = await access.masterToken();
    const me = await request(access.url).get('/auth/acesso').set('authorization', `Bearer ${token}`).expect(200);
    const perfis = await request(access.url)
      .get(`/perfil-de-acesso/filtro?busca=${encodeURIComponent(me.body.perfil_acesso)}`)
      .set('authorization', `Bearer ${masterToken}`)
      .expect(200);
    await request(access.url)
      .patch(`/perfil-de-acesso/${perfis.body[0].id}`)
      .set('authorization', `Bearer ${masterToken}`)
      .send({ permissoes: {} })
      .expect(200);
    await waitFor(async () => (await get('/monitorar', token)).status === 403, { timeoutMs: 1000, intervalMs: 20 });
  });

  it('When a change commits, then its announcement was written in the same transaction and is published; a refused change announces nothing', async () => {
    const db = new pg.Client({ connectionString: access.databaseUrl });
    await db.connect();
    try {
      const linhas = async () =>
        (
          await db.query<{ body: { email?: string; motivo: string }; publicado_em: Date | null }>(
            'select body, publicado_em from outbox order by criado_em, id',
          )
        ).rows;
      const antes = (await linhas()).length;
      await access.userWith('anunciado@empresa.com.br', { monitoramento: { ler: true } });
      await access.deactivate('anunciado@empresa.com.br');
      const desativado = (await linhas()).slice(antes).filter((l) => l.body.email === 'anunciado@empresa.com.br');
      expect(desativado.map((l) => l.body.motivo)).toEqual(['criado', 'perfil_atribuido', 'alterado']);
      await waitFor(async () => (await linhas()).every((l) => l.publicado_em !== null));
      const depois = (await linhas()).length;
      // A second access with a taken e-mail: refused, rolled back, nothing announced.
      const masterToken = await access.masterToken();
      await request(access.url)
        .post('/auth')
        .set('authorization', `Bearer ${masterToken}`)
        .send({ email: 'anunciado@empresa.com.br', perfil: 'colaborador' })
        .expect(409);
      expect((await linhas()).length).toBe(depois);
    } finally {
      await db.end();
    }
  });
});
