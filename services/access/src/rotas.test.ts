import { rotasContraDocumento, startTestIdentity, type TestIdentity } from '@hub/testing';
import { startAccessForTests, type TestAccess } from './access.test-support';

let identity: TestIdentity;
let access: TestAccess;
beforeAll(async () => {
  identity = await startTestIdentity();
  access = await startAccessForTests(identity);
});
afterAll(async () => {
  await access?.close();
  await identity?.close();
});

test('When the routes access really serves are listed, then each is in its /openapi.json and each documented operation is served', async () => {
  const { servidas, naoDocumentadas, naoServidas } = await rotasContraDocumento(access.app, access.url);
  expect({ naoDocumentadas, naoServidas }).toEqual({ naoDocumentadas: [], naoServidas: [] });
  expect(servidas).toEqual(expect.arrayContaining(['GET /auth/acesso', 'PATCH /perfil-de-acesso/{id}']));
});
