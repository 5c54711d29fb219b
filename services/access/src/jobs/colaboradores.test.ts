import type { Broker } from '@hub/broker';
import { publishMessage } from '@hub/broker';
import { type ColaboradorSincronizado, colaboradorSincronizado } from '@hub/contracts';
import { connectTestBroker, startTestIdentity, type TestIdentity, uniqueName, waitFor } from '@hub/testing';
import request from 'supertest';
import { startAccessForTests, type TestAccess } from '../access.test-support';

// Handlers run concurrently (prefetch > 1), so no test relies on the order of messages: each one
// waits for the consumer to report that specific message as applied (committed) or ignored.
let broker: Broker;
let identity: TestIdentity;
let access: TestAccess;
let master: string;
const syncQueue = uniqueName('test.access.colaboradores');
const deadLetters = uniqueName('test.access.colaboradores.dlx');
const processados: { message: ColaboradorSincronizado; applied: boolean }[] = [];

beforeAll(async () => {
  broker = await connectTestBroker('access-sync');
  await broker.withChannel(async (channel) => {
    await channel.assertExchange(deadLetters, 'fanout', { durable: false });
    await channel.assertQueue(deadLetters, { durable: false });
    await channel.bindQueue(deadLetters, deadLetters, '');
  });
  identity = await startTestIdentity({ broker });
  access = await startAccessForTests(identity, {
    syncQueue,
    syncDeadLetterExchange: deadLetters,
    aoSincronizar: (message, applied) => processados.push({ message, applied }),
  });
  master = await access.masterToken();
});
afterAll(async () => {
  await access?.close();
  await identity?.close();
  await broker?.withChannel(async (channel) => {
    await channel.deleteQueue(deadLetters);
    await channel.deleteExchange(deadLetters);
  });
  await broker?.close();
});

const call = (method: 'get' | 'post' | 'delete', path: string) =>
  request(access.url)[method](path).set('authorization', `Bearer ${master}`);
const criar = async (email: string) =>
  (await call('post', '/auth').send({ email, perfil: 'colaborador' }).expect(201)).body.id as string;
const auth = async (id: string) => (await call('get', `/auth/${id}`).expect(200)).body;
const sincronizar = (termoauthId: string, body: object) =>
  request(identity.url).put(`/colaboradores/${termoauthId}`).send(body).expect(200);

/** The consumer's reports on messages matching `match`, once there are `count` of them. */
const processadas = (match: (m: ColaboradorSincronizado) => boolean, count = 1) =>
  waitFor(
    () => {
      const found = processados.filter((p) => match(p.message));
      return found.length >= count ? found : undefined;
    },
    { what: `${count} processed synchronisation message(s)` },
  );
const de =
  (termoauthId: string, extra: Partial<ColaboradorSincronizado> = {}) =>
  (m: ColaboradorSincronizado) =>
    m.termoauth_id === termoauthId &&
    Object.entries(extra).every(([key, value]) => m[key as keyof ColaboradorSincronizado] === value);

describe('Collaborator synchronisation over RabbitMQ', () => {
  it('When the identity service synchronises a collaborator with the same e-mail, then the access is linked with its name', async () => {
    const id = await criar('lia@empresa.com.br');
    await sincronizar('t-lia', { email: 'Lia@empresa.com.br', nome: 'Lia Costa', ativo: true });
    expect((await processadas(de('t-lia')))[0]!.applied).toBe(true);
    expect(await auth(id)).toMatchObject({ vinculado: true, nome: 'Lia Costa', termoauth_id: 't-lia' });
    const colaborador = await call('get', `/colaborador/${id}`).expect(200);
    expect(colaborador.body).toMatchObject({ nome: 'Lia Costa', vinculado: true, termoauth_id: 't-lia' });
  });

  it('When a collaborator’s e-mail is not ASCII (a KELVIN SIGN that lower-cases to k), then no access is linked to it', async () => {
    const id = await criar('karen@empresa.com.br');
    await sincronizar('t-kelvin', { email: '\u212Aaren@empresa.com.br', nome: 'Outra Pessoa', ativo: true });
    expect((await processadas(de('t-kelvin')))[0]!.applied).toBe(false);
    expect(await auth(id)).toMatchObject({ vinculado: false, termoauth_id: null });
    const refused = await call('post', '/auth').send({ email: '\u212Aaren@empresa.com.br', perfil: 'colaborador' });
    expect([refused.status, refused.body.codigo]).toEqual([422, 'dados_invalidos']);
    // A Unicode space around it (String#trim removed it, and the link went to karen@'s access).
    // Straight to the queue: the identity stand-in trims what it is given, an identity provider may not.
    await publishMessage(broker, colaboradorSincronizado, {
      termoauth_id: 't-nbsp',
      email: 'karen@empresa.com.br\u00a0',
      nome: 'Outra Pessoa',
      funcao_id: null,
      ativo: true,
      removido: false,
      versao: 1,
      ocorrido_em: new Date().toISOString(),
    });
    expect((await processadas(de('t-nbsp')))[0]!.applied).toBe(false);
    expect(await auth(id)).toMatchObject({ vinculado: false, termoauth_id: null });
  });

  it('When an access is linked, then DELETE is refused with 409 and the access stays', async () => {
    const id = await criar('rui@empresa.com.br');
    await sincronizar('t-rui', { email: 'rui@empresa.com.br', nome: 'Rui', ativo: true });
    await processadas(de('t-rui'));
    expect((await call('delete', `/auth/${id}`).expect(409)).body.codigo).toBe('acesso_vinculado');
    await auth(id);
  });

  it('When the collaborator is removed in the identity service, then the access is unlinked and may be deleted', async () => {
    const id = await criar('eva@empresa.com.br');
    await sincronizar('t-eva', { email: 'eva@empresa.com.br', nome: 'Eva', ativo: true });
    await processadas(de('t-eva', { removido: false }));
    expect((await auth(id)).vinculado).toBe(true);
    await request(identity.url).delete('/colaboradores/t-eva').expect(204);
    expect((await processadas(de('t-eva', { removido: true })))[0]!.applied).toBe(true);
    expect(await auth(id)).toMatchObject({ vinculado: false, nome: null, termoauth_id: null });
    await call('delete', `/auth/${id}`).expect(204);
  });

  it('When the collaborator was synchronised before the access existed, then the access is linked at creation', async () => {
    await sincronizar('t-ivo', { email: 'ivo@empresa.com.br', nome: 'Ivo', ativo: true });
    expect((await processadas(de('t-ivo')))[0]!.applied).toBe(true);
    const id = await criar('ivo@empresa.com.br');
    expect(await auth(id)).toMatchObject({ vinculado: true, nome: 'Ivo' });
  });

  it('When an access is created while its collaborator is being synchronised, then it ends linked whichever commits first (20 rounds)', async () => {
    const rodadas = Array.from({ length: 20 }, (_, i) => i);
    const ids = await Promise.all(
      rodadas.map(async (i) => {
        const email = `corrida${i}@empresa.com.br`;
        const [id] = await Promise.all([
          criar(email),
          sincronizar(`t-corrida-${i}`, { email, nome: `Corrida ${i}`, ativo: true }),
        ]);
        await processadas(de(`t-corrida-${i}`));
        return id;
      }),
    );
    const desligados = [];
    for (const [i, id] of ids.entries()) {
      const acesso = await auth(id);
      if (!acesso.vinculado || acesso.nome !== `Corrida ${i}`) desligados.push(acesso.email);
    }
    expect(desligados).toEqual([]);
  });

  it('When an older or repeated message arrives after a newer one, then it is ignored and changes nothing', async () => {
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
    expect((await processadas(de('t-ana', { versao: 200 })))[0]!.applied).toBe(true);
    await publishMessage(broker, colaboradorSincronizado, base);
    await publishMessage(broker, colaboradorSincronizado, { ...base, nome: 'Ana Antiga', versao: 100 });
    await publishMessage(broker, colaboradorSincronizado, { ...base, removido: true, versao: 150 });
    const [, repetida] = await processadas(de('t-ana', { versao: 200 }), 2);
    const [antiga] = await processadas(de('t-ana', { versao: 100 }));
    const [remocaoAntiga] = await processadas(de('t-ana', { versao: 150 }));
    expect([repetida!.applied, antiga!.applied, remocaoAntiga!.applied]).toEqual([false, false, false]);
    expect(await auth(id)).toMatchObject({ vinculado: true, nome: 'Ana Nova', termoauth_id: 't-ana' });
  });

  it('When a message breaks its schema, then it is rejected once to the dead-letter exchange, never redelivered, and the queue goes on', async () => {
    const corpo = `{"nao": "serve", "marca": "${uniqueName('ruim')}"}`;
    await broker.publish(colaboradorSincronizado.exchange, colaboradorSincronizado.routingKey, Buffer.from(corpo));
    // A requeued message never reaches the dead-letter exchange: only a rejection without requeue does.
    const morta = await waitFor(
      () =>
        broker.withChannel(async (channel) => {
          const message = await channel.get(deadLetters, { noAck: true });
          return message || undefined;
        }),
      { what: 'the bad message on the dead-letter queue' },
    );
    expect(morta.content.toString()).toBe(corpo);
    expect(morta.fields.redelivered).toBe(false);
    const deaths = (morta.properties.headers?.['x-death'] ?? []) as { queue: string; reason: string; count: number }[];
    expect(deaths).toEqual([expect.objectContaining({ queue: syncQueue, reason: 'rejected', count: 1 })]);

    const id = await criar('depois@empresa.com.br');
    await sincronizar('t-depois', { email: 'depois@empresa.com.br', nome: 'Depois', ativo: true });
    await processadas(de('t-depois'));
    expect((await auth(id)).vinculado).toBe(true);
    const filas = await broker.withChannel(async (channel) => ({
      sync: (await channel.checkQueue(syncQueue)).messageCount,
      mortas: (await channel.checkQueue(deadLetters)).messageCount,
    }));
    expect(filas).toEqual({ sync: 0, mortas: 0 });
  });

  it('When the database refuses the data of a message (a NUL in the name), then it goes to the dead-letter exchange once instead of being retried forever', async () => {
    const termoauthId = uniqueName('t-nul');
    await publishMessage(broker, colaboradorSincronizado, {
      termoauth_id: termoauthId,
      email: 'nul@empresa.com.br',
      nome: 'Nu\u0000l',
      funcao_id: null,
      ativo: true,
      removido: false,
      versao: 1,
      ocorrido_em: new Date().toISOString(),
    });
    const morta = await waitFor(
      () =>
        broker.withChannel(async (channel) => {
          const message = await channel.get(deadLetters, { noAck: true });
          return message || undefined;
        }),
      { what: 'the refused message on the dead-letter queue' },
    );
    expect(JSON.parse(morta.content.toString()).termoauth_id).toBe(termoauthId);
    const deaths = (morta.properties.headers?.['x-death'] ?? []) as { queue: string; reason: string; count: number }[];
    expect(deaths).toEqual([expect.objectContaining({ queue: syncQueue, reason: 'rejected', count: 1 })]);
    expect(processados.some((p) => p.message.termoauth_id === termoauthId)).toBe(false);
  });
});
