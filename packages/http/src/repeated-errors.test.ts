import { Writable } from 'node:stream';
import { createLogger, createRepeatLimiter, type Logger } from '@hub/log';
import request from 'supertest';
import { createHttpApp } from './app';
import { unprocessable } from './errors';
import { bancoIndisponivelErro } from './unavailable';
import { ApiRouter } from './route';

/** A logger whose lines the test reads. */
function loggerEmMemoria() {
  const linhas: { level: number; msg: string; codigo?: string; omitidas?: number; request_id?: string }[] = [];
  const destino = new Writable({
    write(chunk, _encoding, done) {
      linhas.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: createLogger('teste', 'info', destino), linhas };
}

function appQueFalha(logger: Logger, requestContext?: false) {
  const router = new ApiRouter()
    .route({ method: 'get', path: '/fora', summary: 'database down', tag: 't' }, () => {
      throw bancoIndisponivelErro();
    })
    .route({ method: 'get', path: '/ruim', summary: 'bad input', tag: 't' }, () => {
      throw unprocessable('ruim', 'bad');
    });
  return createHttpApp({ service: 'teste', logger, routers: [router], readiness: {}, requestContext });
}

describe('Faults that repeat for every request', () => {
  it('When 30 requests meet the database down, then their 503s are logged once, not once each', async () => {
    const { logger, linhas } = loggerEmMemoria();
    const app = appQueFalha(logger);
    for (let i = 0; i < 30; i += 1) await request(app).get('/fora').expect(503);
    await new Promise((resolve) => setImmediate(resolve));
    expect(linhas.filter((l) => l.codigo === 'banco_indisponivel')).toHaveLength(1);
  });

  it('When clients send bad input, then each refusal is still logged', async () => {
    const { logger, linhas } = loggerEmMemoria();
    const app = appQueFalha(logger);
    for (let i = 0; i < 3; i += 1) await request(app).get('/ruim').expect(422);
    await new Promise((resolve) => setImmediate(resolve));
    expect(linhas.filter((l) => l.codigo === 'ruim')).toHaveLength(3);
  });

  it('When a process keeps AsyncLocalStorage off, then a refusal is still logged with its request id', async () => {
    const { logger, linhas } = loggerEmMemoria();
    const app = appQueFalha(logger, false);
    await request(app).get('/ruim').set('x-request-id', 'pedido-42').expect(422);
    await request(app).get('/ruim').expect(422);
    await new Promise((resolve) => setImmediate(resolve));
    const [dado, feito] = linhas.filter((l) => l.codigo === 'ruim');
    expect(dado?.request_id).toBe('pedido-42');
    expect(feito?.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('When the interval has passed, then the next line says how many were left out', () => {
    let agora = 0;
    const limit = createRepeatLimiter(10_000, () => agora);
    const escritas: number[] = [];
    for (let i = 0; i < 5; i += 1) limit('503 banco_indisponivel', (omitidas) => escritas.push(omitidas));
    agora = 10_000;
    limit('503 banco_indisponivel', (omitidas) => escritas.push(omitidas));
    limit('503 sobrecarregado', (omitidas) => escritas.push(omitidas));
    expect(escritas).toEqual([0, 4, 0]);
  });
});
