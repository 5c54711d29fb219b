import { createLogger } from '@hub/log';
import request from 'supertest';
import { createHttpApp } from './app';

const appCom = (readiness?: Record<string, () => Promise<unknown>>) =>
  createHttpApp({ service: 'teste', logger: createLogger('teste'), routers: [], readiness });

describe('hub_prontidao', () => {
  it('When one dependency answers and another does not, then /metrics says 1 and 0 for them, as /saude/prontidao says ok and falha', async () => {
    let banco = true;
    const app = appCom({
      postgresql: async () => {
        if (!banco) throw new Error('connection refused');
      },
      rabbitmq: () => Promise.reject(new Error('closed')),
    });

    const metricas = (await request(app).get('/metrics').expect(200)).text;
    expect(metricas).toContain('# TYPE hub_prontidao gauge');
    expect(metricas).toMatch(/^hub_prontidao\{dependencia="postgresql",service="teste"\} 1$/m);
    expect(metricas).toMatch(/^hub_prontidao\{dependencia="rabbitmq",service="teste"\} 0$/m);
    const prontidao = await request(app).get('/saude/prontidao').expect(503);
    expect(prontidao.body.dependencias).toEqual({ postgresql: 'ok', rabbitmq: 'falha: closed' });

    banco = false; // checked again at each scrape, not remembered
    expect((await request(app).get('/metrics')).text).toMatch(
      /^hub_prontidao\{dependencia="postgresql",service="teste"\} 0$/m,
    );
  });

  it('When a service has no readiness check, then it exports no hub_prontidao series', async () => {
    expect((await request(appCom()).get('/metrics').expect(200)).text).not.toContain('hub_prontidao');
  });
});
