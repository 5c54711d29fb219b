import { connect } from 'node:net';
import { createGatewayApp } from '@hub/gateway/src/app';
import { readConfig } from '@hub/gateway/src/config';
import type { RunningServer } from '@hub/http';
import { createLogger } from '@hub/log';
import { type Contexto, encerrarContexto, iniciarContexto } from '@hub/hub-api/src/contexto.test-support';
import { assinar, cenario } from '@hub/hub-api/src/features/publicacao/cenario.test-support';
import request from 'supertest';

/**
 * A publisher that gives up before its answer (its timeout, a dropped connection) and sends the
 * publication again with the same Idempotency-Key, through the real gateway to a real hub-api.
 * Whether the first attempt was committed or not, the publisher ends with exactly one event.
 */
describe('a publisher that times out and sends again with the same Idempotency-Key', () => {
  let ctx: Contexto;
  let gateway: RunningServer;
  let close: () => void;
  beforeAll(async () => {
    ctx = await iniciarContexto();
    const config = readConfig({ ...ctx.identity.env, HUB_AMBIENTE: 'LOCALHOST', HUB_API_URL: ctx.hub.url });
    const app = createGatewayApp({ config, logger: createLogger('gateway') });
    close = app.close;
    gateway = await app.listen(0);
  });
  afterAll(async () => {
    close();
    await gateway?.close();
    await encerrarContexto(ctx);
  });

  /** Writes the publication on a connection of its own and cuts it `apos` ms later, its answer unread. */
  function desistir(token: string, corpo: string, chave: string, apos: number): Promise<void> {
    const { port } = new URL(gateway.url);
    return new Promise((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /eventos HTTP/1.1\r\nHost: g\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
            `Idempotency-Key: ${chave}\r\nContent-Length: ${Buffer.byteLength(corpo)}\r\n\r\n${corpo}`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, apos);
      });
      socket.on('error', () => resolve());
    });
  }

  it('When the first attempt is cut at any moment, then the retry answers the one event, with its deliveries, never a second', async () => {
    const c = await cenario(ctx);
    await assinar(ctx, c.tipo.id);
    await assinar(ctx, c.tipo.id);
    const ids = new Map<string, string>();
    for (let i = 0; i < 24; i += 1) {
      const chave = `desistente-${i}`;
      const corpo = JSON.stringify(c.corpo({ entidade_id: `pedido-${i}` }));
      // From before the gateway forwards it to after hub-api has answered.
      await desistir(c.tokenDoDono, corpo, chave, i % 8 === 0 ? 0 : i * 4);
      const retry = await request(gateway.url)
        .post('/eventos')
        .set({ authorization: `Bearer ${c.tokenDoDono}`, 'idempotency-key': chave, 'content-type': 'application/json' })
        .send(corpo);
      expect({ i, status: retry.status }).toEqual({ i, status: 201 });
      expect(retry.body.entregas).toHaveLength(2);
      ids.set(chave, retry.body.id);
      // A second retry answers the same again.
      const denovo = await request(gateway.url)
        .post('/eventos')
        .set({ authorization: `Bearer ${c.tokenDoDono}`, 'idempotency-key': chave, 'content-type': 'application/json' })
        .send(corpo);
      expect(denovo.body.id).toBe(retry.body.id);
    }
    const eventos = await ctx.hub.db.evento.findMany({ where: { tipoDeEventoId: c.tipo.id }, select: { id: true } });
    expect(eventos.map((e) => e.id).sort()).toEqual([...ids.values()].sort());
    expect(await ctx.hub.db.entrega.count({ where: { tipoDeEventoId: c.tipo.id } })).toBe(2 * ids.size);
  });
});
