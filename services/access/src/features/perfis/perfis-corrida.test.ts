import { startTestIdentity, type TestIdentity } from '@hub/testing';
import request from 'supertest';
import { createDb, type Db } from '../../db';
import { startAccessForTests, type TestAccess } from '../../access.test-support';

// Deleting a profile while an access is being given it: one of the two must win, never both.
let identity: TestIdentity;
let access: TestAccess;
let master: string;
let db: Db;

beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  master = await access.masterToken();
  db = createDb(access.databaseUrl);
});
afterAll(async () => {
  await db?.$disconnect();
  await access?.close();
  await identity?.close();
});

const call = (method: 'get' | 'post' | 'patch' | 'delete', path: string) =>
  request(access.url)[method](path).set('authorization', `Bearer ${master}`);

const ROUNDS = 40;
const AT_ONCE = 10;

async function preparar(round: number) {
  const perfil = (
    await call('post', '/perfil-de-acesso')
      .send({ nome: `Corrida ${round}`, permissoes: {} })
      .expect(201)
  ).body.id as string;
  const acesso = (
    await call('post', '/auth')
      .send({ email: `corrida-${round}@empresa.com.br`, perfil: 'colaborador' })
      .expect(201)
  ).body.id as string;
  return { perfil, acesso };
}

async function disputar({ perfil, acesso }: { perfil: string; acesso: string }) {
  const [apagar, atribuir] = await Promise.all([
    call('delete', `/perfil-de-acesso/${perfil}`),
    call('patch', `/colaborador/${acesso}`).send({ perfil_de_acesso_id: perfil }),
  ]);
  const perfilAinda = (await call('get', `/perfil-de-acesso/${perfil}`)).status;
  const atribuido = (await call('get', `/colaborador/${acesso}`).expect(200)).body.perfil_de_acesso_id;
  return {
    apagar: `${apagar.status} ${apagar.body?.codigo ?? ''}`.trim(),
    atribuir: `${atribuir.status} ${atribuir.body?.codigo ?? ''}`.trim(),
    perfilAinda,
    atribuido,
    perfil,
  };
}

it('When a profile is deleted while it is being assigned, many times at once, then each pair has exactly one winner and no access points at a deleted profile', async () => {
  const resultados = [];
  for (let first = 0; first < ROUNDS; first += AT_ONCE) {
    const rounds = Array.from({ length: AT_ONCE }, (_, i) => first + i);
    const pares = await Promise.all(rounds.map(preparar));
    resultados.push(...(await Promise.all(pares.map(disputar))));
  }
  for (const r of resultados) {
    const apagou = { apagar: '204', atribuir: '422 perfil_inexistente', perfilAinda: 404, atribuido: null };
    const atribuiu = { apagar: '409 perfil_em_uso', atribuir: '200', perfilAinda: 200, atribuido: r.perfil };
    const { perfil: _perfil, ...visto } = r;
    expect([apagou, atribuiu]).toContainEqual(visto);
  }
  const orfaos = await db.$queryRaw<{ n: number }[]>`
    select count(*)::int as n from acesso a
    where a.perfil_de_acesso_id is not null
      and not exists (select 1 from perfil_de_acesso p where p.id = a.perfil_de_acesso_id)`;
  expect(orfaos[0]!.n).toBe(0);
}, 120_000);
