import { startTestIdentity, type TestIdentity, unsignedToken } from '@hub/testing';
import request from 'supertest';
import { type GatewayUnderTest, startGatewayWithFakes } from '../testing/gateway.test-support';
import { type RawResponse, rawGet } from '../testing/raw-request.test-support';

const POLICY = /^"(usuario|aplicativo|ip)";q=(\d+);w=60$/;
const STATE = /^"(usuario|aplicativo|ip)";r=(\d+);t=(\d+)$/;

/** The policy name, quota, remaining and seconds to reset of an answer's RateLimit headers. */
function rateLimitOf(response: RawResponse | request.Response) {
  const policy = POLICY.exec(String(response.headers['ratelimit-policy']));
  const state = STATE.exec(String(response.headers.ratelimit));
  if (!policy || !state) throw new Error(`no RateLimit headers in ${JSON.stringify(response.headers)}`);
  return { policy: policy[1], q: Number(policy[2]), name: state[1], r: Number(state[2]), t: Number(state[3]) };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

let identity: TestIdentity;
beforeAll(async () => {
  identity = await startTestIdentity();
});
afterAll(() => identity.close());

describe('gateway rate limit, keyed on the verified caller', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithFakes({
      ...identity.env,
      RATE_LIMIT_PER_MINUTE: '3',
      RATE_LIMIT_USER_PER_MINUTE: '4',
      RATE_LIMIT_APPLICATION_PER_MINUTE: '6',
    });
  });
  afterAll(() => gateway.close());

  /** `count` GETs from one loopback address, in order; the answers. */
  async function calls(count: number, from: string, headers: Record<string, string> = {}) {
    const answers: RawResponse[] = [];
    for (let i = 0; i < count; i++) answers.push(await rawGet(gateway.url, '/funcao', { localAddress: from, headers }));
    return answers;
  }

  it('When two users call from one address, then each has a budget of their own', async () => {
    const ana = await identity.userToken({ email: 'ana@empresa.com.br' });
    const bia = await identity.userToken({ email: 'bia@empresa.com.br' });
    expect((await calls(4, '127.0.0.1', bearer(ana))).map((a) => a.status)).toEqual([200, 200, 200, 200]);
    const over = (await calls(1, '127.0.0.1', bearer(ana)))[0]!;
    expect(over.status).toBe(429);
    expect(rateLimitOf(over)).toMatchObject({ policy: 'usuario', q: 4, r: 0 });

    const other = (await calls(1, '127.0.0.1', bearer(bia)))[0]!;
    expect(other.status).toBe(200);
    expect(rateLimitOf(other)).toMatchObject({ policy: 'usuario', q: 4, r: 3 });
  });

  it('When one user calls from two addresses, with two tokens, then both count against one budget', async () => {
    const first = await identity.userToken({ email: 'caio@empresa.com.br' });
    const second = await identity.userToken({ email: 'Caio@Empresa.com.br', sub: 'outro-sub' });
    expect(first).not.toBe(second);
    const answers = [
      ...(await calls(2, '127.0.0.4', bearer(first))),
      ...(await calls(2, '127.0.0.5', bearer(second))),
      ...(await calls(1, '127.0.0.5', bearer(first))),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 429]);
    expect(answers.map((a) => rateLimitOf(a).r)).toEqual([3, 2, 1, 0, 0]);
  });

  it('When requests bring no token or an invalid one, then they share the address budget, and a valid token does not', async () => {
    const stranger = await startTestIdentity();
    const strangerKey = stranger.key;
    await stranger.close();
    const invalid = [
      {},
      { authorization: 'Bearer not-a-token' },
      bearer(await identity.craft({ claims: { typ: 'usuario', email: 'ana@empresa.com.br' }, key: strangerKey })),
      bearer(
        await identity.craft({
          claims: { typ: 'usuario', email: 'ana@empresa.com.br' },
          expiresIn: Math.floor(Date.now() / 1000) - 120,
        }),
      ),
      bearer(unsignedToken({ typ: 'aplicativo', sub: 'loja', exp: Math.floor(Date.now() / 1000) + 600 })),
      bearer(
        await identity.craft({ claims: { typ: 'usuario', email: 'ana@empresa.com.br' }, audience: 'outro-publico' }),
      ),
    ];
    const answers: RawResponse[] = [];
    for (const headers of invalid) answers.push((await calls(1, '127.0.0.6', headers))[0]!);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429, 429]);
    for (const answer of answers) expect(rateLimitOf(answer).policy).toBe('ip');
    expect(answers.map((a) => rateLimitOf(a).r)).toEqual([2, 1, 0, 0, 0, 0]);

    const valid = await identity.userToken({ email: 'duda@empresa.com.br' });
    const answer = (await calls(1, '127.0.0.6', bearer(valid)))[0]!;
    expect(answer.status).toBe(200);
    expect(rateLimitOf(answer).policy).toBe('usuario');
  });

  it('When an application uses two tokens from two addresses, then they share its client_id budget, apart from a user of the same name', async () => {
    const one = await identity.appToken('loja-integrada');
    const two = await identity.appToken('loja-integrada');
    const answers = [
      ...(await calls(3, '127.0.0.7', bearer(one))),
      ...(await calls(3, '127.0.0.8', bearer(two))),
      ...(await calls(1, '127.0.0.8', bearer(one))),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200, 429]);
    expect(rateLimitOf(answers[0]!)).toMatchObject({ policy: 'aplicativo', q: 6, r: 5 });

    // A user whose e-mail is the same text as the client_id is someone else.
    const user = await identity.userToken({ email: 'loja-integrada' });
    expect((await calls(1, '127.0.0.7', bearer(user)))[0]!.status).toBe(200);
  });

  it('When the budget is spent, then 429 problem+json with Retry-After equal to the RateLimit reset', async () => {
    const token = await identity.userToken({ email: 'eva@empresa.com.br' });
    const answers = await calls(5, '127.0.0.9', bearer(token));
    const over = answers[4]!;
    expect(over.status).toBe(429);
    expect(over.headers['content-type']).toContain('application/problem+json');
    const body = JSON.parse(over.body);
    expect(body).toMatchObject({ status: 429, codigo: 'muitas_requisicoes' });
    expect(body.detail).toContain('for this user');
    expect(over.headers['ratelimit-policy']).toBe('"usuario";q=4;w=60');
    const { t } = rateLimitOf(over);
    expect(t).toBeGreaterThanOrEqual(1);
    expect(t).toBeLessThanOrEqual(60);
    expect(over.headers['retry-after']).toBe(String(t));
    expect(over.headers.ratelimit).toBe(`"usuario";r=0;t=${t}`);
    // Answers within the budget carry the headers too, but no Retry-After.
    expect(answers[0]!.headers['retry-after']).toBeUndefined();
    expect(answers[0]!.headers['ratelimit-policy']).toBe('"usuario";q=4;w=60');
  });
});

describe('gateway rate limit for an application', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithFakes({ ...identity.env, RATE_LIMIT_USER_PER_MINUTE: '10' });
  });
  afterAll(() => gateway.close());

  it('When an application publishes twenty times what a user may, from one server, then it is not throttled', async () => {
    const token = await identity.appToken('emissor-de-notas');
    const client = request(gateway.url);
    const statuses: number[] = [];
    let last: request.Response | undefined;
    // 20 at a time, like a busy publisher's connection pool.
    for (let batch = 0; batch < 10; batch++) {
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => client.post('/aplicativo').set(bearer(token)).send({ entidade_id: 'x' })),
      );
      statuses.push(...answers.map((a) => a.status));
      last = answers.at(-1);
    }
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    expect(statuses).toHaveLength(200);
    expect(rateLimitOf(last!)).toMatchObject({ policy: 'aplicativo', q: 120_000, r: 120_000 - 200 });
    // The same server without the token is held to the address budget.
    const anonymous = await client.get('/funcao').expect(200);
    expect(rateLimitOf(anonymous).policy).toBe('ip');
  });
});

describe('gateway rate limit defaults', () => {
  let gateway: GatewayUnderTest;
  beforeAll(async () => {
    gateway = await startGatewayWithFakes(identity.env);
  });
  afterAll(() => gateway.close());

  it('When nothing is configured, then an application gets room for 1,000 events a second', async () => {
    const answer = await request(gateway.url)
      .post('/aplicativo')
      .set(bearer(await identity.appToken('emissor-de-notas')))
      .send({ entidade_id: 'x' })
      .expect(200);
    expect(rateLimitOf(answer)).toMatchObject({ policy: 'aplicativo', q: 120_000 });
    expect(rateLimitOf(answer).q).toBeGreaterThanOrEqual(1000 * 60);
  });

  it('When nothing is configured, then a user gets 600 a minute and an address without a token fewer', async () => {
    const user = await request(gateway.url)
      .get('/funcao')
      .set(bearer(await identity.userToken({ email: 'fabi@empresa.com.br' })))
      .expect(200);
    expect(user.headers['ratelimit-policy']).toBe('"usuario";q=600;w=60');
    const anonymous = await request(gateway.url).get('/funcao').expect(200);
    const { policy, q } = rateLimitOf(anonymous);
    expect(policy).toBe('ip');
    expect(q).toBeLessThan(600);
  });
});

describe('gateway rate limit while the identity keys cannot be read', () => {
  it('When a token cannot be verified because the identity is down, then the request is counted by its address and still reaches the service', async () => {
    const gone = await startTestIdentity();
    const token = await gone.userToken({ email: 'gil@empresa.com.br' });
    await gone.close();
    const gateway = await startGatewayWithFakes(gone.env);
    try {
      const answer = await request(gateway.url).get('/funcao').set(bearer(token)).expect(200);
      expect(rateLimitOf(answer).policy).toBe('ip');
      expect(gateway.upstreams.function.seen.at(-1)?.headers.authorization).toBe(`Bearer ${token}`);
    } finally {
      await gateway.close();
    }
  });
});
