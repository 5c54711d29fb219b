import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Broker } from '@hub/broker';
import { colaboradorSincronizado } from '@hub/contracts';
import { createIdentityDevApp } from '@hub/identity-stand-in';
import { createLogger } from '@hub/log';
import { connectTestBroker, uniqueName, waitFor } from '@hub/testing';
import request from 'supertest';
import { loadOrCreateKey } from './key-file';

let dir: string;
let broker: Broker;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'identity-dev-'));
  broker = await connectTestBroker('identity-dev');
});
afterAll(async () => {
  await broker?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('identity-dev', () => {
  it('When started twice with the same key file, then the key is the same and the file is private', async () => {
    const file = path.join(dir, 'chave', 'key.json');
    const first = await loadOrCreateKey(file);
    const second = await loadOrCreateKey(file);
    expect(second.kid).toBe(first.kid);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(first.publicJwk).not.toHaveProperty('d');
  });

  it('When a collaborator is stored and removed, then both synchronisations are published with increasing versions', async () => {
    const key = await loadOrCreateKey(path.join(dir, 'k3.json'));
    const queue = uniqueName('test.identity-dev');
    await broker.declare(async (ch) => {
      await ch.assertQueue(queue, { autoDelete: true, durable: false });
      await ch.bindQueue(queue, colaboradorSincronizado.exchange, '#');
    });
    const seen: { termoauth_id: string; removido: boolean; versao: number; email: string }[] = [];
    await broker.consume(queue, async (message) => {
      const body = JSON.parse(message.content.toString());
      if (body.termoauth_id === 'idev-1') seen.push(body);
    });
    const app = createIdentityDevApp({
      issuer: { issuer: 'http://id.test', audience: 'event-hub', ttlSeconds: 60, key },
      broker,
      logger: createLogger('identity-dev'),
    });
    await request(app)
      .put('/colaboradores/idev-1')
      .send({ email: 'Bia@empresa.com.br', nome: 'Bia', funcao_id: 'f1', ativo: true })
      .expect(200);
    await request(app).delete('/colaboradores/idev-1').expect(204);
    await request(app).delete('/colaboradores/idev-1').expect(404);
    await waitFor(() => seen.length === 2);
    expect(seen[0]).toMatchObject({ email: 'bia@empresa.com.br', removido: false });
    expect(seen[1]).toMatchObject({ removido: true });
    expect(seen[1]!.versao).toBeGreaterThan(seen[0]!.versao);
  });

  it('When HUB_AMBIENTE is PRODUCTION, then it refuses to start', () => {
    const tsx = path.resolve(__dirname, '../../../node_modules/.bin/tsx');
    const result = spawnSync(tsx, [path.join(__dirname, 'main.ts')], {
      env: { ...process.env, HUB_AMBIENTE: 'PRODUCTION', IDENTITY_DEV_KEY_FILE: path.join(dir, 'never.json') },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('refuses to start with HUB_AMBIENTE=PRODUCTION');
  });
});
