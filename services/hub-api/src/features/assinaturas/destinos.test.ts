import { lookup as dnsLookup } from 'node:dns/promises';
import {
  auth,
  type Contexto,
  criarAplicativo,
  criarTipo,
  criarVersao,
  encerrarContexto,
  iniciarContexto,
} from '../../contexto.test-support';

/** Host names of the tests' own, resolved to private addresses; any other name as the system does. */
const NOMES: Record<string, string> = { 'interno.exemplo': '10.11.12.13', 'metadados.exemplo': '169.254.169.254' };
const lookup = async (host: string) =>
  NOMES[host] ? [{ address: NOMES[host], family: 4 }] : dnsLookup(host, { all: true, verbatim: true });

let sandbox: Contexto;
let localhost: Contexto;
let producaoComHttp: Contexto;
beforeAll(async () => {
  [sandbox, localhost, producaoComHttp] = await Promise.all([
    iniciarContexto({ ambiente: 'SANDBOX', allowlist: '10.77.0.0/16', start: { lookup } }),
    iniciarContexto({ ambiente: 'LOCALHOST' }),
    iniciarContexto({ ambiente: 'PRODUCTION', env: { DESTINATION_ALLOW_HTTP: 'true' } }),
  ]);
});
afterAll(async () => {
  await encerrarContexto(sandbox);
  await encerrarContexto(localhost);
  await encerrarContexto(producaoComHttp);
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
  // IPv4-compatible, NAT64, 6to4 and Teredo forms of internal addresses, and cloud metadata services
  'http://[::127.0.0.1]/webhook',
  'https://[::a9fe:a9fe]/latest/meta-data/',
  'https://[64:ff9b::169.254.169.254]/latest/meta-data/',
  'https://[2002:a00:1::1]/webhook',
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/webhook',
  'http://168.63.129.16/machine?comp=goalstate',
  'https://[fd00:ec2::254]/latest/meta-data/',
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
    for (const url of ['https://93.184.215.14/webhook', 'https://10.77.3.4:9000/webhook']) {
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

  test.each([
    ['https://interno.exemplo/webhook', '10.11.12.13'],
    ['https://metadados.exemplo/latest', '169.254.169.254'],
  ])(
    'When the host of %s resolves to a non-public address in SANDBOX, then 422 destino_proibido says so without the address',
    async (url, endereco) => {
      const response = await sandbox
        .api()
        .post('/assinatura')
        .set(auth(sandbox.todas))
        .send({ ...(await corpo(sandbox)), url_de_destino: url });
      expect(response.status).toBe(422);
      expect(response.body.codigo).toBe('destino_proibido');
      expect(JSON.stringify(response.body)).toMatch(/resolves to a non-public address/);
      expect(JSON.stringify(response.body)).not.toContain(endereco);
    },
  );

  test('When the URL is http in SANDBOX, then 422 https_obrigatorio and nothing is stored; https is accepted', async () => {
    const dados = await corpo(sandbox);
    const response = await sandbox
      .api()
      .post('/assinatura')
      .set(auth(sandbox.todas))
      .send({ ...dados, url_de_destino: 'http://93.184.215.14/webhook' });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({
      codigo: 'https_obrigatorio',
      erros: [{ caminho: '/url_de_destino', mensagem: expect.stringMatching(/https/) }],
    });
    expect(await sandbox.hub.db.assinatura.count({ where: { tipoDeEventoId: dados.tipo_de_evento_id } })).toBe(0);
    const https = await sandbox
      .api()
      .post('/assinatura')
      .set(auth(sandbox.todas))
      .send({ ...dados, url_de_destino: 'https://93.184.215.14/webhook' });
    expect(https.status).toBe(201);
  });

  test('When DESTINATION_ALLOW_HTTP is set in PRODUCTION, then an http URL to a public address is accepted and a private one is still refused', async () => {
    const accepted = await producaoComHttp
      .api()
      .post('/assinatura')
      .set(auth(producaoComHttp.todas))
      .send({ ...(await corpo(producaoComHttp)), url_de_destino: 'http://93.184.215.14/webhook' });
    expect(accepted.status).toBe(201);
    const refused = await producaoComHttp
      .api()
      .post('/assinatura')
      .set(auth(producaoComHttp.todas))
      .send({ ...(await corpo(producaoComHttp)), url_de_destino: 'http://10.0.0.1/webhook' });
    expect(refused.body.codigo).toBe('destino_proibido');
  });

  test('When an http subscription accepted before https was required is PATCHed in SANDBOX, then other fields and its own URL pass, and a new http URL is 422 https_obrigatorio', async () => {
    const criada = await sandbox
      .api()
      .post('/assinatura')
      .set(auth(sandbox.todas))
      .send({ ...(await corpo(sandbox)), url_de_destino: 'https://93.184.215.14/antiga' });
    // As a subscription stored before the rule: its URL is http.
    await sandbox.hub.db.assinatura.update({
      where: { id: criada.body.id },
      data: { urlDeDestino: 'http://93.184.215.14/antiga' },
    });
    const patch = (body: object) =>
      sandbox.api().patch(`/assinatura/${criada.body.id}`).set(auth(sandbox.todas)).send(body);

    expect((await patch({ ativa: false, maximo_de_tentativas: 3 })).status).toBe(200);
    const mesma = await patch({ url_de_destino: 'http://93.184.215.14/antiga', ativa: true });
    expect(mesma.status).toBe(200);
    expect(mesma.body).toMatchObject({ url_de_destino: 'http://93.184.215.14/antiga', ativa: true });
    const nova = await patch({ url_de_destino: 'http://93.184.215.14/nova' });
    expect(nova.status).toBe(422);
    expect(nova.body.codigo).toBe('https_obrigatorio');
    expect(
      (await sandbox.api().get(`/assinatura/${criada.body.id}`).set(auth(sandbox.leitor))).body.url_de_destino,
    ).toBe('http://93.184.215.14/antiga');
  });
});
