import { casesOf } from './cases';
import {
  hostileBodyKinds,
  hostileJsonKinds,
  hostilePathKinds,
  hostileQueryKinds,
  wrongTypeFor,
} from './hostile-values';
import { type OpenApiDocument, operationsOf } from './operations';
import { judge } from './run';

const document: OpenApiDocument = {
  paths: {
    '/coisa/{id}': {
      patch: {
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' } },
          { name: 'busca', in: 'query', required: false, schema: { type: 'string' } },
        ],
        requestBody: {
          content: {
            'application/json': {
              schema: {
                type: 'object',
                additionalProperties: false,
                properties: {
                  nome: { type: 'string', maxLength: 120 },
                  permissoes: { type: 'object', properties: { ler: { type: 'boolean' } } },
                },
              },
            },
          },
        },
      },
    },
  },
};
const [operation] = operationsOf(document);
const context = (seed: number) => ({
  // Fixed valid values, so that only the seed decides the cases.
  fixtures: {
    ids: { coisa: '0193a000-0000-7000-8000-000000000001' },
    fields: { busca: 'abc', nome: 'nome fixo' },
    companyDomain: 'empresa.com.br',
  },
  tokenFor: () => 'token',
  seed,
  runs: 1,
});
const kindsOf = (k: object) => Object.keys(k).sort();

test('When an operation is documented, then every kind goes to each query parameter, path parameter, body field (nested too) and the whole body', () => {
  const cases = casesOf(operation!, context(1));
  const byTarget = (target: string) =>
    cases
      .filter((c) => c.target === target)
      .map((c) => c.kind)
      .sort();
  expect(byTarget('query busca')).toEqual(kindsOf(hostileQueryKinds('busca')));
  expect(byTarget('path id')).toEqual(kindsOf(hostilePathKinds()));
  for (const field of ['nome', 'permissoes', 'permissoes.ler'])
    expect(byTarget(`body ${field}`)).toEqual(kindsOf(hostileJsonKinds(wrongTypeFor(['string']))));
  expect(byTarget('body')).toEqual(kindsOf(hostileBodyKinds({})));
});

test('When the seed is the same, then the hostile values are the same; when it changes, then they change', () => {
  const values = (seed: number) => casesOf(operation!, context(seed)).map((c) => `${c.request.path} ${c.request.body}`);
  const sameSeed = values(7);
  expect(values(7)).toEqual(sameSeed);
  expect(values(8)).not.toEqual(sameSeed);
});

test('When a NUL goes into a body field, then it sits inside a valid value of that field', () => {
  const nul = casesOf(operation!, context(3)).find((c) => c.target === 'body nome' && c.kind === 'nul')!;
  const body = JSON.parse(nul.request.body!.toString('utf8')) as { nome: string };
  expect(body.nome).toContain('\u0000');
  expect(body.nome.replace('\u0000', '')).toBe('nome fixo');
});

const answer = { ms: 10, text: '' };
const problem = (status: number, text: string) => ({
  ...answer,
  status,
  contentType: 'application/problem+json',
  text,
});
const ok = (status: number) => ({ ...answer, status, contentType: 'application/json' });
test.each([
  ['a 500', problem(500, '{"codigo":"erro_interno"}'), undefined, '500 erro_interno'],
  [
    'a 404 in HTML',
    { ...answer, status: 404, contentType: 'text/html' },
    undefined,
    '404 not problem+json (text/html)',
  ],
  ['a problem without codigo', problem(400, '{}'), undefined, '400 problem+json without codigo'],
  ['a 200 after 6 s', { ...ok(200), ms: 6000 }, undefined, 'slower than 5000 ms (6000 ms)'],
  [
    'a reset connection',
    { ...answer, status: 0, contentType: '', error: 'ECONNRESET' },
    undefined,
    'no answer (ECONNRESET)',
  ],
  ['a 201 to a NUL', ok(201), { kind: 'nul', target: 'body nome' }, 'accepted (201) a value it must refuse'],
  [
    'a 200 to an unknown property',
    ok(200),
    { kind: 'unknown_field', target: 'body' },
    'accepted (200) a property its document does not allow',
  ],
  [
    'a 422 problem to a NUL',
    problem(422, '{"codigo":"dados_invalidos"}'),
    { kind: 'nul', target: 'body nome' },
    undefined,
  ],
])('When the answer is %s, then the sweep says so (or nothing when it is right)', (_name, response, c, expected) => {
  expect(judge(response, c, operation)).toBe(expected);
});
