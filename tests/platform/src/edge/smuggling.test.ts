import { startTestIdentity, type TestIdentity } from '@hub/testing';
import { REQUEST_TIMEOUT_MS, rodarCaso, rodarLento } from './differential';
import {
  type GatewayNaFrente,
  gatewayEnv,
  type Recorders,
  sistemaDoGateway,
  startGatewayNaFrente,
  startRecorders,
} from './gateway-harness';
import { julgar } from './judge';
import { startGravador, type Gravador } from './recorder';
import { CORPUS } from './smuggling-corpus';

let identity: TestIdentity;
let gravadores: Recorders;
let referencia: Gravador;
let tokens: { atacante: string; outro: string };
let gateway: GatewayNaFrente | undefined;

beforeAll(async () => {
  identity = await startTestIdentity();
  gravadores = await startRecorders();
  referencia = await startGravador('referencia', REQUEST_TIMEOUT_MS);
  tokens = {
    atacante: await identity.userToken({ email: 'atacante@example.com' }),
    outro: await identity.userToken({ email: 'outro@example.com' }),
  };
});

afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
});

afterAll(async () => {
  await referencia?.close();
  await gravadores?.close();
  await identity?.close();
});

/** A gateway of the case's own: what one case leaves on its upstream connections cannot fail another. */
async function sistema() {
  gateway = await startGatewayNaFrente(gatewayEnv(identity, gravadores), gravadores, [tokens.atacante, tokens.outro]);
  return sistemaDoGateway(gateway, gravadores, tokens);
}

test('The corpus holds at least 100 cases, each named once', () => {
  expect(CORPUS.length).toBeGreaterThanOrEqual(100);
  expect(new Set(CORPUS.map((c) => c.nome)).size).toBe(CORPUS.length);
});

describe.each(CORPUS.filter((c) => c.lento === undefined).map((c) => [c.nome, c] as const))(
  'Through the gateway: %s',
  (_nome, caso) => {
    test('every request a service got is one node:http parsed, and the next caller is served as itself', async () => {
      const resultado = await rodarCaso(caso, referencia, await sistema());
      expect(julgar(resultado)).toEqual([]);
    });
  },
);

describe.each(CORPUS.filter((c) => c.lento !== undefined).map((c) => [c.nome, c] as const))(
  'Through the gateway: %s',
  (_nome, caso) => {
    test('the gateway cuts the connection itself, before the head is whole, and nothing reaches a service', async () => {
      const { saida, total } = await rodarLento(caso, await sistema());
      expect(saida.fechou).toBe(true);
      expect(saida.escritos).toBeLessThan(Math.max(total, 1));
      expect(saida.status.filter((s) => s >= 500)).toEqual([]);
      expect(gravadores.todos.flatMap((g) => g.registros)).toEqual([]);
    });
  },
);
