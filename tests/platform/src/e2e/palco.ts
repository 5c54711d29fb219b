import pg from 'pg';
import { closeConnections } from '../http-client';
import { type Platform, type PlatformOptions, startPlatform } from '../platform';
import { type Assinante, iniciarAssinante } from './receptor';

/**
 * The end-to-end files poll and burst as no person would: the gateway's rate limits, and the bounds
 * that refuse an overload (docs/decisions/overload-refused-fast.md), are not what they test.
 */
const GATEWAY_SEM_LIMITE = {
  RATE_LIMIT_USER_PER_MINUTE: '1000000',
  RATE_LIMIT_APPLICATION_PER_MINUTE: '1000000',
  GATEWAY_TARGET_LATENCY: '60s',
  GATEWAY_PUBLICATION_TARGET_LATENCY: '60s',
};
const HUB_API_SEM_LIMITE = { HUB_PUBLICACOES_TEMPO_ALVO: '60s' };

export interface Palco {
  platform: Platform;
  /** A subscriber in the test process. */
  assinante: Assinante;
  /** hub-api's database, for what no route shows (every delivery's successful attempts). */
  db: pg.Client;
  encerrar(): Promise<void>;
}

/** What an end-to-end file stands on: the platform (gateway without rate limits), a subscriber, hub-api's database. */
export async function montarPalco(opcoes: PlatformOptions = {}): Promise<Palco> {
  const assinante = await iniciarAssinante();
  const platform = await startPlatform({
    ...opcoes,
    env: {
      ...opcoes.env,
      gateway: { ...GATEWAY_SEM_LIMITE, ...opcoes.env?.gateway },
      'hub-api': { ...HUB_API_SEM_LIMITE, ...opcoes.env?.['hub-api'] },
    },
  });
  const db = new pg.Client({ connectionString: platform.databases['hub-api'] });
  await db.connect();
  return {
    platform,
    assinante,
    db,
    encerrar: async () => {
      closeConnections();
      await db.end();
      await platform.stop();
      await assinante.fechar();
    },
  };
}
