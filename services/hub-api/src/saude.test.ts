import { rotasContraDocumento, waitFor } from '@hub/testing';
import { type Contexto, encerrarContexto, iniciarContexto } from './contexto.test-support';

let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto();
});
afterAll(() => encerrarContexto(ctx));

describe('health, readiness and the OpenAPI document', () => {
  test('When the database and RabbitMQ answer, then /saude/prontidao is 200 naming both', async () => {
    // The first query of a fresh process may be slow on a loaded machine: wait for readiness.
    const response = await waitFor(
      async () => {
        const answer = await ctx.api().get('/saude/prontidao');
        return answer.status === 200 ? answer : undefined;
      },
      { what: 'readiness' },
    );
    expect(response.body).toEqual({
      situacao: 'ok',
      servico: 'hub-api',
      dependencias: { postgresql: 'ok', rabbitmq: 'ok' },
    });
    expect((await ctx.api().get('/saude')).status).toBe(200);
  });

  test('When the OpenAPI document is read, then it lists the registry, delivery, reprocessing and queue operations', async () => {
    const { body } = await ctx.api().get('/openapi.json');
    const operations = Object.entries(body.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m} ${path}`),
    );
    // By first segment: /entrega and /entregas (the subscriber's) are counted apart.
    const count = (segmento: string) => operations.filter((op) => op.split(' ')[1]!.split('/')[1] === segmento).length;
    expect({
      aplicativo: count('aplicativo'),
      tipo: count('tipo-de-evento'),
      versao: count('versao-de-esquema'),
      esquema: count('esquema'),
      assinatura: count('assinatura'),
      assinaturas: count('assinaturas'),
      jwks: count('.well-known'),
      entrega: count('entrega'),
      entregas: count('entregas'),
      reprocessamento: count('reprocessamento'),
      fila: count('fila'),
    }).toEqual({
      // and POST and DELETE /aplicativo/{id}/portal
      aplicativo: 6,
      tipo: 7,
      versao: 8,
      esquema: 1,
      // and POST /assinatura/testar-filtro, POST /assinatura/{id}/reproduzir
      assinatura: 9,
      // the subscriber's: GET, POST, PATCH and DELETE, testar-filtro, saude, reproduzir and reproducoes
      assinaturas: 8,
      jwks: 1,
      entrega: 4,
      entregas: 3,
      reprocessamento: 4,
      fila: 4,
    });
    const tags = (path: string, method: string) => body.paths[path][method].tags;
    expect(tags('/entrega/{id}/reenviar', 'post')).toEqual(['Entrega']);
    expect(tags('/reprocessamento/{id}', 'delete')).toEqual(['Solicitação de reprocessamento']);
    expect(body.paths['/.well-known/jwks.json'].get.security).toEqual([]);
    // The subscriber's routes take an application's token, and say so.
    expect(body.paths['/entregas/{id}/reenviar'].post.security).toEqual([{ aplicativo: [] }]);
    expect(body.paths['/entrega/{id}/reenviar'].post.security).toBeUndefined();
  });

  test('When the routes hub-api really serves are listed, then each is in its /openapi.json and each documented operation is served', async () => {
    const { servidas, naoDocumentadas, naoServidas } = await rotasContraDocumento(ctx.hub.app, ctx.hub.url);
    expect({ naoDocumentadas, naoServidas }).toEqual({ naoDocumentadas: [], naoServidas: [] });
    expect(servidas).toEqual(expect.arrayContaining(['GET /fila/{nome}/mensagens', 'POST /entrega/{id}/reenviar']));
  });

  test('When an unknown route is asked for, then 404 problem+json', async () => {
    const response = await ctx.api().get('/nada');
    expect(response.status).toBe(404);
    expect(response.headers['content-type']).toMatch(/problem\+json/);
  });
});
