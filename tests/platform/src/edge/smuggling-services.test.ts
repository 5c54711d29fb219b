import { HEADERS_TIMEOUT_MS } from '@hub/http';
import { type Platform, startPlatform } from '../platform';
import { HOST, rodarLento } from './differential';
import { enviar, type Saida } from './raw-client';
import { CORPUS } from './smuggling-corpus';

/**
 * The corpus sent to each service directly (access, function, hub-api as `pnpm start` runs them),
 * each case followed on its connection by a clean request of the same caller, the connection then
 * half-closed (the services keep the platform's 30 s request timeout); then another caller's clean
 * request on a new connection. No answer may be 5xx, and the clean request is answered for itself.
 */

const SERVICOS = ['access', 'function', 'hub-api'] as const;
let platform: Platform;
let tokens: { atacante: string; outro: string };

beforeAll(async () => {
  platform = await startPlatform({ deliveryWorker: false });
  tokens = {
    atacante: await platform.userToken('atacante@example.com'),
    outro: await platform.userToken('outro@example.com'),
  };
}, 120_000);

afterAll(async () => {
  await platform?.stop();
});

const alvoDe = (servico: (typeof SERVICOS)[number]) => {
  const { hostname, port } = new URL(platform.urls[servico]);
  return { host: hostname, port: Number(port) };
};

/** A clean GET /saude of `token`'s, its request id `marca`: the answer echoes it. */
const saude = (marca: string, token: string, fim = '') =>
  `GET /saude HTTP/1.1\r\nHost: ${HOST}\r\nAuthorization: Bearer ${token}\r\nx-request-id: ${marca}\r\n${fim}\r\n`;

const respondido = (saida: Saida, marca: string) =>
  saida.status[0] === 200 && saida.texto.toLowerCase().includes(`x-request-id: ${marca}`);

let n = 0;
describe.each(SERVICOS)('Straight to %s', (servico) => {
  test.each(CORPUS.filter((c) => c.lento === undefined).map((c) => [c.nome, c] as const))(
    '%s: no 5xx, and the next caller is answered for itself',
    async (_nome, caso) => {
      n += 1;
      const bytes = caso.bytes({ host: HOST, auth: `Bearer ${tokens.atacante}` });
      const mesma = `limpo-${n}-mesma`;
      const saida = await enviar(alvoDe(servico), [...bytes, saude(mesma, tokens.atacante)], {
        prazoMs: 10_000,
        meioFechar: true,
      });
      const outro = `limpo-${n}-outro`;
      const depois = await enviar(alvoDe(servico), [saude(outro, tokens.outro, 'Connection: close\r\n')], {
        prazoMs: 10_000,
        ate: '"servico"',
      });
      expect(saida.status.filter((s) => s >= 500)).toEqual([]);
      expect(depois.status.filter((s) => s >= 500)).toEqual([]);
      expect(respondido(depois, outro)).toBe(true);
      expect(depois.texto).toContain(`"servico":"${servico}"`);
    },
  );
});

test('Straight to each service, a connection that sends nothing and a head trickled byte by byte are cut within the header timeout', async () => {
  const lentos = CORPUS.filter((c) => c.lento !== undefined);
  // Node looks for expired heads once a second: the cut comes within a second after HEADERS_TIMEOUT_MS.
  const prazo = HEADERS_TIMEOUT_MS + 2_000;
  const corridas = SERVICOS.flatMap((servico) =>
    lentos.map(async (caso) => {
      const { saida, total } = await rodarLento(caso, { alvo: alvoDe(servico), tokens }, prazo);
      return {
        servico,
        caso: caso.nome,
        fechou: saida.fechou,
        antes: saida.escritos < Math.max(total, 1),
        status: saida.status,
      };
    }),
  );
  for (const r of await Promise.all(corridas)) expect(r).toEqual({ ...r, fechou: true, antes: true, status: [408] });
}, 30_000);
