import http from 'node:http';
import { connect } from 'node:net';
import { waitFor } from '@hub/testing';
import { auth, type Contexto, encerrarContexto, iniciarContexto } from '../../contexto.test-support';
import { cenario, publicar } from './cenario.test-support';

// Two publications under way at most in this instance (HUB_PUBLICACOES_EM_ANDAMENTO).
let ctx: Contexto;
beforeAll(async () => {
  ctx = await iniciarContexto({ env: { HUB_PUBLICACOES_EM_ANDAMENTO: '2' } });
});
afterAll(() => encerrarContexto(ctx));

/** A POST /eventos whose body arrives only when `terminar` is called: under way until then. */
function publicacaoLenta(token: string, corpo: unknown) {
  const texto = Buffer.from(JSON.stringify(corpo));
  const req = http.request(`${ctx.hub.url}/eventos`, {
    method: 'POST',
    headers: { ...auth(token), 'content-type': 'application/json', 'content-length': texto.length },
  });
  const resposta = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      lenta.status = res.statusCode;
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  req.write(texto.subarray(0, 10));
  const lenta = {
    resposta,
    /** The answer's status once it came (before the body ended only if refused). */
    status: undefined as number | undefined,
    terminado: false,
    terminar: () => {
      lenta.terminado = true;
      req.end(texto.subarray(10));
    },
    abortar: () => req.destroy(),
  };
  return lenta;
}

async function metrica(nome: string): Promise<number> {
  const linha = (await ctx.api().get('/metrics')).text.split('\n').find((l) => l.startsWith(`${nome}{`));
  return linha ? Number(linha.split(' ').at(-1)) : 0;
}

test('When as many publications as allowed are under way, then one more is answered 503 sobrecarregado with Retry-After at once, nothing stored; once they end, publications are accepted again', async () => {
  const c = await cenario(ctx);
  const antes = await metrica('hub_publicacoes_sobrecarga_total');
  const recusadosAntes = (await ctx.api().get('/evento-recusado').set(auth(ctx.todas))).body.total as number;
  const lentas = [publicacaoLenta(c.tokenDoDono, c.corpo()), publicacaoLenta(c.tokenDoDono, c.corpo())];
  // Accepted while the two were still on their way in (their headers not read yet): counted below.
  let cedo = 0;

  try {
    // Each of the two is admitted once its headers arrive; the third finds both under way.
    const recusada = await waitFor(
      async () => {
        // A slow one whose token was still being checked when a probe took the slot was refused
        // (the limiter runs after the guards): it is sent again.
        for (const [i, lenta] of lentas.entries())
          if (lenta.status === 503) {
            lenta.resposta.catch(() => undefined);
            lenta.abortar();
            lentas[i] = publicacaoLenta(c.tokenDoDono, c.corpo());
          }
        const r = await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'a-mais' }));
        if (r.status === 201) cedo += 1;
        return r.status === 503 ? r : undefined;
      },
      { what: 'a publication refused while two are under way' },
    );
    expect(recusada.headers['retry-after']).toBe('1');
    expect(recusada.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(recusada.body).toMatchObject({
      status: 503,
      codigo: 'sobrecarregado',
      type: 'urn:event-hub:problema:sobrecarregado',
    });
    // Other routes are not limited.
    expect((await ctx.api().get('/evento').set(auth(ctx.todas))).status).toBe(200);

    for (const lenta of lentas) lenta.terminar();
  } finally {
    // A failure above leaves no request open (the hub would wait for it when it closes).
    for (const lenta of lentas) if (!lenta.terminado) lenta.abortar();
  }
  expect(await Promise.all(lentas.map((l) => l.resposta))).toEqual([201, 201]);
  expect((await publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'depois' }))).status).toBe(201);

  expect(await metrica('hub_publicacoes_sobrecarga_total')).toBeGreaterThan(antes);
  // An overload is not a refusal of the event: nothing of it is stored.
  expect((await ctx.api().get('/evento-recusado').set(auth(ctx.todas))).body.total).toBe(recusadosAntes);
  const { total } = (await ctx.api().get(`/evento?tipo_de_evento_id=${c.tipo.id}`).set(auth(ctx.todas))).body;
  expect(total).toBe(3 + cedo);
});

/** A POST written by hand on its own connection: headers, then a body that never ends. */
function corpoSemFim(caminho: string, cabecalhos: Record<string, string>) {
  const socket = connect(Number(new URL(ctx.hub.url).port), '127.0.0.1');
  let recebido = '';
  socket.on('data', (parte) => {
    recebido += String(parte);
  });
  socket.on('error', () => undefined);
  const linhas = Object.entries({ 'content-type': 'application/json', 'content-length': '5000', ...cabecalhos });
  socket.write(`POST ${caminho} HTTP/1.1\r\nhost: x\r\n${linhas.map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n{"a":`);
  return { socket, fechado: new Promise<string>((resolve) => socket.on('close', () => resolve(recebido))) };
}

test('When callers without a valid token open more slow publications than there are slots, then they hold none: each is answered 401 before its body and its connection closed, and an honest publication is accepted', async () => {
  const c = await cenario(ctx);
  const antes = await metrica('hub_publicacoes_sobrecarga_total');
  const lentos = [
    corpoSemFim('/eventos', {}),
    corpoSemFim('/eventos', {}),
    corpoSemFim('/eventos', auth('not-a-token')),
    corpoSemFim('/evento', auth('not-a-token')),
    corpoSemFim('/eventos', auth(`${c.tokenDoDono.slice(0, -4)}AAAA`)),
  ];
  try {
    const honestas = await Promise.all([
      publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'honesta-1' })),
      publicar(ctx, c.tokenDoDono, c.corpo({ entidade_id: 'honesta-2' })),
    ]);
    expect(honestas.map((r) => r.status)).toEqual([201, 201]);
    for (const resposta of await Promise.all(lentos.map((l) => l.fechado))) {
      expect(resposta).toMatch(/^HTTP\/1\.1 401 /);
      expect(resposta).toMatch(/content-type: application\/problem\+json/i);
    }
  } finally {
    for (const lento of lentos) lento.socket.destroy();
  }
  expect(await metrica('hub_publicacoes_sobrecarga_total')).toBe(antes);
});
