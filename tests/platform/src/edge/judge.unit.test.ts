import { julgar, origem, type Resultado } from './judge';
import { statusDe } from './raw-client';
import type { Registro } from './recorder';

const A = 'Bearer atacante';
const B = 'Bearer outro';
const LIMPO = '/eventos/limpo-1-outro-chamador';

const registro = (servidor: string, method: string, url: string, authorization?: string, corpo = ''): Registro => ({
  servidor,
  method,
  url,
  cabecalhos: {},
  authorization,
  corpo: Buffer.from(corpo, 'latin1'),
  completo: true,
});

const respostaLimpa = (url = LIMPO, authorization = B) => {
  const texto = `HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\n${JSON.stringify({ servidor: 'hub-api', method: 'GET', url, authorization, corpo: 0 })}`;
  return { texto, fechou: true, status: statusDe(texto), escritos: 0 };
};

/** A case whose one POST the reference and the service both saw, and the other caller's clean request. */
function resultado(mudar: Partial<Resultado> = {}): Resultado {
  return {
    referencia: [registro('referencia', 'POST', '/eventos', A, 'abc')],
    upstream: [registro('hub-api', 'POST', '/eventos', A, 'abc'), registro('hub-api', 'GET', LIMPO, B)],
    saida: { texto: 'HTTP/1.1 200 OK\r\n\r\n', fechou: false, status: [200], escritos: 0 },
    limpo: { caminho: LIMPO, authorization: B, saida: respostaLimpa() },
    rotear: (caminho) =>
      caminho.startsWith('/eventos') ? 'hub-api' : caminho.startsWith('/perfil') ? 'access' : undefined,
    ...mudar,
  };
}

test('When both sides saw the same request and the other caller was served as itself, then nothing fails', () => {
  expect(julgar(resultado())).toEqual([]);
});

test('When a service got the body of a request as a request of its own, then it is a request the reference did not parse', () => {
  const r = resultado();
  r.upstream = [
    registro('hub-api', 'POST', '/eventos', A, ''),
    registro('hub-api', 'GET', '/perfil-de-acesso/x', B),
    r.upstream[1]!,
  ];
  const falhas = julgar(r);
  expect(falhas).toContain('a request the reference did not parse: hub-api got POST "/eventos" body "" auth set');
  expect(falhas.some((f) => f.startsWith("the other caller's credentials"))).toBe(true);
});

test("When the other caller's request never arrived and its answer named another request, then both are failures", () => {
  const r = resultado({ limpo: { caminho: LIMPO, authorization: B, saida: respostaLimpa('/perfil-de-acesso/x') } });
  r.upstream = [r.upstream[0]!];
  expect(julgar(r)).toEqual([
    'the clean request reached its service 0 times',
    expect.stringContaining('the clean request was not answered for itself'),
  ]);
});

test('When a request reached another service than its path is routed to, or a path resolving to /metrics, then it fails', () => {
  const r = resultado({ referencia: [registro('referencia', 'GET', '/eventos/%2e%2e/metrics', A)] });
  r.upstream = [registro('access', 'GET', '/eventos/%2e%2e/metrics', A), r.upstream[1]!];
  expect(julgar(r)).toEqual([
    'reached /metrics: access got GET "/eventos/%2e%2e/metrics" body "" auth set',
    'a request the reference did not parse: access got GET "/eventos/%2e%2e/metrics" body "" auth set',
  ]);
});

test('When any answer is 5xx, then it fails; an absolute-form target is compared as origin form', () => {
  const r = resultado({ referencia: [registro('referencia', 'POST', 'http://hub.test/eventos', A, 'abc')] });
  r.saida = { ...r.saida, status: [502] };
  expect(julgar(r)).toEqual(['answered 502']);
  expect(origem('http://hub.test/eventos?x=1')).toBe('/eventos?x=1');
});

test("When only the lenient reference parsed a request, then it passes only for a system given one; the case's own lines, only with its caller's credentials", () => {
  const r = resultado({ referencia: [] });
  expect(julgar(r)).toHaveLength(1);
  expect(julgar({ ...r, leniente: [registro('leniente', 'POST', '/eventos', A, 'abc')] })).toEqual([]);
  expect(julgar({ ...r, proprios: [{ method: 'POST', url: '/eventos', authorization: A }] })).toEqual([]);
  expect(
    julgar({ ...r, proprios: [{ method: 'POST', url: '/eventos', authorization: 'Bearer outro-ainda' }] }),
  ).toHaveLength(1);
});
