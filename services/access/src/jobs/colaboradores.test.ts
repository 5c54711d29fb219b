import { type Broker, publishMessage } from '@hub/broker';
import { type ColaboradorSincronizado, colaboradorSincronizado } from '@hub/contracts';
import { connectTestBroker, startTestIdentity, type TestIdentity, uniqueName, waitFor } from '@hub/testing';
import request from 'supertest';
import { startAccessForTests, type TestAccess } from '../testing';

let broker: Broker;
let identity: TestIdentity;
let access: TestAccess;
let master: string;

beforeAll(async () => {
  broker = await connectTestBroker('access-sync');
  identity = await startTestIdentity({ broker });
  access = await startAccessForTests(identity, { syncQueue: uniqueName('test.access.colaboradores') });
  master = await access.masterToken();
});
afterAll(async () => {
  await access?.close();
  await identity?.close();
  await broker?.close();
});

const call = (method: 'get' | 'post' | 'delete', path: string) =>
  request(access.url)[method](path).set('authorization', `Bearer ${master}`);
const criar = async (email: string) =>
  (await call('post', '/auth').send({ email, perfil: 'colaborador' }).expect(201)).body.id as string;
const auth = async (id: string) => (await call('get', `/auth/${id}`).expect(200)).body;
const sincronizar = (termoauthId: string, body: object) =>
  request(identity.url).put(`/colaboradores/${termoauthId}`).send(body).expect(200);

describe('Collaborator synchronisation over RabbitMQ', () => {
  it('When the identity service synchronises a collaborator with the same e-mail, then the access is linked with its name', async () => {
    const id = await criar('lia@empresa.com.br');
    await sincronizar('t-lia', { email: 'Lia@empresa.com.br', nome: 'Lia Costa', ativo: true });
    const linked = await waitFor(async () => {
      const acesso = await auth(id);
      return acesso.vinculado && acesso;
    });
    expect(linked).toMatchObject({ vinculado: true, nome: 'Lia Costa', termoauth_id: 't-lia' });
    const colaborador = await call('get', `/colaborador/${id}`).expect(200);
    expect(colaborador.body).toMatchObject({ nome: 'Lia Costa', vinculado: true, termoauth_id: 't-lia' });
  });

  it('When an access is linked, then DELETE is refused with 409 and the access stays', async () => {
    const id = await criar('rui@empresa.com.br');
    await sincronizar('t-rui', { email: 'rui@empresa.com.br', nome: 'Rui', ativo: true });
    await waitFor(async () => (await auth(id)).vinculado);
    expect((await call('delete', `/auth/${id}`).expect(409)).body.codigo).toBe('acesso_vinculado');
    await auth(id);
  });

  it('When the collaborator is removed in the identity service, then the access is unlinked and may be deleted', async () => {
    const id = await criar('eva@empresa.com.br');
    await sincronizar('t-eva', { email: 'eva@empresa.com.br', nome: 'Eva', ativo: true });
    await waitFor(async () => (await auth(id)).vinculado);
    await request(identity.url).delete('/colaboradores/t-eva').expect(204);
    await waitFor(async () => !(await auth(id)).vinculado);
    expect(await auth(id)).toMatchObject({ vinculado: false, nome: null, termoauth_id: null });
    await call('delete', `/auth/${id}`).expect(204);
  });

  it('When the collaborator was synchronised before the access existed, then the access is linked at creation', async () => {
    await sincronizar('t-ivo', { email: 'ivo@empresa.com.br', nome: 'Ivo', ativo: true });
    const probe = await criar('sonda-ivo@empresa.com.br');
    await sincronizar('t-sonda', { email: 'sonda-ivo@empresa.com.br', nome: 'Sonda', ativo: true });
    await waitFor(async () => (await auth(probe)).vinculado); // messages of one queue arrive in order
    const id = await criar('ivo@empresa.com.br');
    expect(await auth(id)).toMatchObject({ vinculado: true, nome: 'Ivo' });
  });

  it('When an older or repeated message arrives after a newer one, then it changes nothing', async () => {
    const id = await criar('ana@empresa.com.br');
    const base: ColaboradorSincronizado = {
      termoauth_id: 't-ana',
      email: 'ana@empresa.com.br',
      nome: 'Ana Nova',
      funcao_id: null,
      ativo: true,
      removido: false,
      versao: 200,
      ocorrido_em: new Date().toISOString(),
    };
    await publishMessage(broker, colaboradorSincronizado, base);
    await publishMessage(broker, colaboradorSincronizado, base);
    await publishMessage(broker, colaboradorSincronizado, { ...base, nome: 'Ana Antiga', versao: 100 });
    await publishMessage(broker, colaboradorSincronizado, { ...base, removido: true, versao: 150 });
    const probe = await criar('sonda-ana@empresa.com.br');
    await publishMessage(broker, colaboradorSincronizado, {
      ...base,
      termoauth_id: 't-sonda-ana',
      email: 'sonda-ana@empresa.com.br',
      versao: 1,
    });
    await waitFor(async () => (await auth(probe)).vinculado);
    expect(await auth(id)).toMatchObject({ vinculado: true, nome: 'Ana Nova', termoauth_id: 't-ana' });
  });

  it('When a message is not valid JSON of its schema, then it is dropped and the queue goes on', async () => {
    await broker.publish(
      colaboradorSincronizado.exchange,
      colaboradorSincronizado.routingKey,
      Buffer.from('{"nao": "serve"}'),
    );
    const id = await criar('depois@empresa.com.br');
    await sincronizar('t-depois', { email: 'depois@empresa.com.br', nome: 'Depois', ativo: true });
    await waitFor(async () => (await auth(id)).vinculado);
  });
});
