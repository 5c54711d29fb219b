import { startAccessForTests, type TestAccess } from '@hub/access/testing';
import { rotasContraDocumento, startTestIdentity, type TestIdentity } from '@hub/testing';
import { startFunctionForTests, type TestFunction } from './function.test-support';

let identity: TestIdentity;
let access: TestAccess;
let fn: TestFunction;
beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
  fn = await startFunctionForTests(identity, access);
});
afterAll(async () => {
  await fn?.close();
  await access?.close();
  await identity?.close();
});

test('When the routes function really serves are listed, then each is in its /openapi.json and each documented operation is served', async () => {
  const { servidas, naoDocumentadas, naoServidas } = await rotasContraDocumento(fn.app, fn.url);
  expect({ naoDocumentadas, naoServidas }).toEqual({ naoDocumentadas: [], naoServidas: [] });
  expect(servidas).toEqual(expect.arrayContaining(['GET /funcao', 'PATCH /funcao/{id}']));
});

test('When /metrics is read, then it has the outbox lag', async () => {
  const texto = await (await fetch(`${fn.url}/metrics`)).text();
  expect(texto).toMatch(/^hub_outbox_lag_seconds\{service="function"\} \d+(\.\d+)?$/m);
});
