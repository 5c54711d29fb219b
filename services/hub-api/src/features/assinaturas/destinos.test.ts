import {
  auth,
  type Contexto,
  criarAplicativo,
  criarTipo,
  criarVersao,
  encerrarContexto,
  iniciarContexto,
} from '../../test-support';

let sandbox: Contexto;
let localhost: Contexto;
beforeAll(async () => {
  [sandbox, localhost] = await Promise.all([
    iniciarContexto({ ambiente: 'SANDBOX', allowlist: '10.77.0.0/16' }),
    iniciarContexto({ ambiente: 'LOCALHOST' }),
  ]);
});
afterAll(async () => {
  await encerrarContexto(sandbox);
  await encerrarContexto(localhost);
});

async function corpo(ctx: Contexto) {
  const assinante = await criarAplicativo(ctx, 'Assinante');
  const tipo = await criarTipo(ctx);
  await criarVersao(ctx, tipo.id);
  return { aplicativo_assinante_id: assinante.id, tipo_de_evento_id: tipo.id, versao_do_esquema: 1 };
}

const PROIBIDAS = [
  'http://127.0.0.1:8086/webhook',
  'http://10.0.0.1/webhook',
  'http://169.254.169.254/latest/meta-data/',
  'http://[::1]:8086/webhook',
  'http://[::ffff:127.0.0.1]/webhook',
  'http://localhost:8086/webhook',
  'http://100.64.0.1/webhook',
  'http://[fd00::1]/webhook',
];

describe('destination safety of subscriptions', () => {
  test.each(PROIBIDAS)(
    'When the URL is %s in SANDBOX, then 422 destino_proibido; in LOCALHOST it is accepted',
    async (url) => {
      const refused = await sandbox
        .api()
        .post('/assinatura')
        .set(auth(sandbox.todas))
        .send({ ...(await corpo(sandbox)), url_de_destino: url });
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ codigo: 'destino_proibido', erros: [{ caminho: '/url_de_destino' }] });
      const accepted = await localhost
        .api()
        .post('/assinatura')
        .set(auth(localhost.todas))
        .send({ ...(await corpo(localhost)), url_de_destino: url });
      expect(accepted.status).toBe(201);
    },
  );

  test('When the URL is public or inside DESTINATION_ALLOWLIST in SANDBOX, then it is accepted', async () => {
    for (const url of ['https://93.184.215.14/webhook', 'http://10.77.3.4:9000/webhook']) {
      const response = await sandbox
        .api()
        .post('/assinatura')
        .set(auth(sandbox.todas))
        .send({ ...(await corpo(sandbox)), url_de_destino: url });
      expect({ url, status: response.status }).toEqual({ url, status: 201 });
    }
  });

  test('When PATCH points a subscription at a forbidden address in SANDBOX, then 422 and the URL stays', async () => {
    const criada = await sandbox
      .api()
      .post('/assinatura')
      .set(auth(sandbox.todas))
      .send({ ...(await corpo(sandbox)), url_de_destino: 'https://93.184.215.14/a' });
    const response = await sandbox
      .api()
      .patch(`/assinatura/${criada.body.id}`)
      .set(auth(sandbox.todas))
      .send({ url_de_destino: 'http://169.254.169.254/' });
    expect(response.status).toBe(422);
    expect(response.body.codigo).toBe('destino_proibido');
    expect(
      (await sandbox.api().get(`/assinatura/${criada.body.id}`).set(auth(sandbox.leitor))).body.url_de_destino,
    ).toBe('https://93.184.215.14/a');
  });

  test('When the host does not resolve in SANDBOX, then 422 destino_nao_resolvido', async () => {
    const response = await sandbox
      .api()
      .post('/assinatura')
      .set(auth(sandbox.todas))
      .send({ ...(await corpo(sandbox)), url_de_destino: 'https://nao-existe.invalid/x' });
    expect(response.status).toBe(422);
    expect(response.body.codigo).toBe('destino_nao_resolvido');
  });
});
