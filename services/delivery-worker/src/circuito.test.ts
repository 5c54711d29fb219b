import type http from 'node:http';
import { waitFor } from '@hub/testing';
import { contagemQueAbre, destinoFora, deveAbrir, Janela, type LimiaresDoCircuito } from './features/destinos/circuito';
import { iniciarReceptor, type Receptor } from './receptor.test-support';
import {
  type Assinatura,
  cenario,
  createTestHub,
  deleteTestTopology,
  startDeliveryWorkerForTests,
  type TestDeliveryWorker,
  type TestHub,
} from './delivery-worker.test-support';

describe('circuit breaker: the window and the threshold', () => {
  const limiares: LimiaresDoCircuito = {
    minimoDeFalhas: 10,
    parcela: 0.5,
    janelaMs: 60_000,
    abertoMs: 30_000,
    abertoMaximoMs: 600_000,
  };

  it('When an attempt got no answer, a 5xx or a 429, then the destination counts as down; a 2xx or any other 4xx does not', () => {
    expect(destinoFora({ sucesso: false, statusHttp: null })).toBe(true);
    expect(destinoFora({ sucesso: false, statusHttp: 500 })).toBe(true);
    expect(destinoFora({ sucesso: false, statusHttp: 503 })).toBe(true);
    expect(destinoFora({ sucesso: false, statusHttp: 429 })).toBe(true);
    expect(destinoFora({ sucesso: true, statusHttp: 200 })).toBe(false);
    expect(destinoFora({ sucesso: false, statusHttp: 400 })).toBe(false);
    expect(destinoFora({ sucesso: false, statusHttp: 401 })).toBe(false);
    expect(destinoFora({ sucesso: false, statusHttp: 410 })).toBe(false);
  });

  it('When attempts age past the window, then they are no longer counted; the oldest attempt counted is reported', () => {
    const janela = new Janela(60_000);
    janela.anotar(false, 1_000);
    janela.anotar(true, 30_500);
    janela.anotar(false, 30_200);
    expect(janela.contar(60_000)).toEqual({ tentativas: 3, falhas: 2, desdeMs: 1_000 });
    // 62 s: the first second's slice is out of the window.
    expect(janela.contar(62_000)).toEqual({ tentativas: 2, falhas: 1, desdeMs: 30_200 });
    janela.esquecerAntesDe(31_000);
    expect(janela.vazia()).toBe(true);
  });

  it('When the failures reach the share of one worker of the threshold and the share of the attempts, then it opens; short of either, it does not', () => {
    const contagem = (tentativas: number, falhas: number) => ({ tentativas, falhas, desdeMs: 0 });
    expect(deveAbrir(contagem(10, 10), limiares, 1)).toBe(true);
    expect(deveAbrir(contagem(10, 9), limiares, 1)).toBe(false);
    // Two workers: each sees about half the failures, and needs 5.
    expect(deveAbrir(contagem(6, 5), limiares, 2)).toBe(true);
    expect(deveAbrir(contagem(6, 4), limiares, 2)).toBe(false);
    // Enough failures, but not half of the attempts.
    expect(deveAbrir(contagem(30, 14), limiares, 1)).toBe(false);
    expect(deveAbrir(contagem(30, 15), limiares, 1)).toBe(true);
    expect(deveAbrir(contagem(100, 100), { ...limiares, minimoDeFalhas: 0 }, 1)).toBe(false);
  });

  it('When an origin that answered for a whole window goes down, then its circuit opens once the last sixth of the window is mostly failures, long before its failures outweigh the whole window', () => {
    const janela = new Janela(60_000);
    const cheia = { ...limiares, janelaMs: 60_000 };
    // 20 successes a second for 50 s, then 20 failures a second.
    for (let ms = 0; ms < 50_000; ms += 50) janela.anotar(true, ms);
    let abriuEm: number | undefined;
    for (let ms = 50_000; ms < 90_000 && abriuEm === undefined; ms += 50) {
      janela.anotar(false, ms);
      if (contagemQueAbre(janela, ms, cheia, 1)) abriuEm = ms;
    }
    // The recent 10 s (from 46 s): 80 successes, then failures pass them at about 54 s.
    expect(abriuEm).toBeGreaterThanOrEqual(54_000);
    expect(abriuEm).toBeLessThan(55_000);
    const abre = contagemQueAbre(janela, abriuEm!, cheia, 1)!;
    expect(abre.duranteMs).toBe(10_000);
    expect(abre.contagem.desdeMs).toBeGreaterThanOrEqual(abriuEm! - 10_000);
    // The whole window alone would have waited for the failures to reach its 1,000 successes.
    expect(deveAbrir(janela.contar(abriuEm!), cheia, 1)).toBe(false);
  });

  it('When an origin that answered for a whole window stops answering (each attempt fails at DELIVERY_TIMEOUT, 10 s, the recent part), then its circuit opens as soon as the timeouts outweigh the recent answers, not once they outweigh the whole window', () => {
    const janela = new Janela(60_000);
    const cheia = { ...limiares, janelaMs: 60_000 };
    // 20 answers a second for 50 s, each known at once; then every attempt started from 50 s on
    // fails 10 s after it started, counted when its timeout ends.
    for (let ms = 0; ms < 50_000; ms += 50) janela.anotar(true, ms, ms);
    let abriuEm: number | undefined;
    for (let fim = 60_000; fim < 120_000 && abriuEm === undefined; fim += 50) {
      janela.anotar(false, fim - 10_000, fim);
      if (contagemQueAbre(janela, fim, cheia, 1)) abriuEm = fim;
    }
    // The first timeouts end at 60 s; the recent 10 s then hold no answer, so the threshold's 10
    // failures open it half a second later. Counted by their starts, the timeouts fell before the
    // recent part and only the whole window opened it, at about 85 s.
    expect(abriuEm).toBeLessThan(61_000);
    // The oldest start among the failures counted: the stale-failure guard compares it with the
    // circuit's last closing.
    expect(contagemQueAbre(janela, abriuEm!, cheia, 1)!.contagem.desdeMs).toBe(50_000);
  });

  it('When failures are few or spread thin, then neither the window nor its recent part opens the circuit', () => {
    const janela = new Janela(60_000);
    const cheia = { ...limiares, janelaMs: 60_000 };
    // One failure in three, all window long: never half of either count.
    for (let ms = 0; ms < 60_000; ms += 100) janela.anotar(ms % 300 !== 0, ms);
    expect(contagemQueAbre(janela, 60_000, cheia, 1)).toBeUndefined();
    // A few failures in a quiet recent part: under the threshold's count.
    const quieta = new Janela(60_000);
    for (let ms = 0; ms < 50_000; ms += 1_000) quieta.anotar(true, ms);
    for (let ms = 55_000; ms < 55_000 + (limiares.minimoDeFalhas - 1) * 10; ms += 10) quieta.anotar(false, ms);
    expect(contagemQueAbre(quieta, 56_000, cheia, 1)).toBeUndefined();
    quieta.anotar(false, 55_900);
    expect(contagemQueAbre(quieta, 56_000, cheia, 1)?.duranteMs).toBe(10_000);
  });
});

/**
 * The circuit breaker of a destination origin (issue 24) with two workers sharing it: the state in
 * the destino row, jobs of an open circuit held without attempts in the destination's own queue
 * (not consumed while held, consumed one at a time while half-open), one probe at a time by a lease.
 * The receiver's answer is set by each test (fail, hold, accept).
 */
describe('delivery worker: the circuit breaker shared by two workers', () => {
  let hub: TestHub;
  let receptor: Receptor;
  let modo: 'falhar' | 'segurar' | 'aceitar' = 'falhar';
  const presos: http.ServerResponse[] = [];
  const workers: TestDeliveryWorker[] = [];

  beforeAll(async () => {
    hub = await createTestHub();
    receptor = await iniciarReceptor({
      '/circuito': (_req, res) => {
        if (modo === 'falhar') res.writeHead(500).end();
        else if (modo === 'aceitar') res.writeHead(204).end();
        else presos.push(res);
      },
    });
  });
  afterEach(async () => {
    for (const w of workers.splice(0)) await w.close();
    for (const res of presos.splice(0)) res.destroy();
  });
  afterAll(async () => {
    await deleteTestTopology(hub).catch(() => undefined);
    await receptor?.fechar();
    await hub?.close();
  });

  /** Two workers with the circuit's thresholds of the test (4 failures over both, half the attempts). */
  async function doisWorkers(env: Record<string, string>) {
    for (let i = 0; i < 2; i += 1)
      workers.push(
        await startDeliveryWorkerForTests(hub, {
          DELIVERY_DESTINOS_REFRESH: '100ms',
          DELIVERY_CIRCUIT_MIN_FAILURES: '4',
          DELIVERY_CIRCUIT_FAILURE_SHARE: '0.5',
          DELIVERY_CIRCUIT_WINDOW: '60s',
          ...env,
        }),
      );
    return workers;
  }

  /** A subscription of its own origin (a query string marks it; the origin is the receiver's) with its row read by both workers. */
  async function assinatura(
    marca: string,
  ): Promise<{ c: Awaited<ReturnType<typeof cenario>>; a: Assinatura; origem: string }> {
    const c = await cenario(hub);
    const a = await c.assinar(`${receptor.url('/circuito')}?${marca}=1`, 50);
    const origem = new URL(a.url).origin;
    const agora = new Date();
    // The row as hub-api writes it with the subscription (a closed circuit), read by both workers.
    await hub.db.destino.upsert({
      where: { origem },
      create: { id: crypto.randomUUID(), origem, criadoEm: agora, atualizadoEm: agora },
      update: {
        circuito: 'fechado',
        circuitoDesde: null,
        circuitoAberturas: 0,
        circuitoAbertoAte: null,
        circuitoSonda: null,
        circuitoSondaAte: null,
      },
    });
    await hub.db.destinoCircuito.deleteMany({ where: { destino: { origem } } });
    return { c, a, origem };
  }

  const linha = (origem: string) => hub.db.destino.findUniqueOrThrow({ where: { origem } });
  const historico = (origem: string) =>
    hub.db.destinoCircuito.findMany({ where: { destino: { origem } }, orderBy: [{ em: 'asc' }, { id: 'asc' }] });
  const noCircuito = (origem: string, vale: (circuito: string) => boolean, what: string) =>
    waitFor(async () => vale((await linha(origem)).circuito), { timeoutMs: 20_000, what });
  const tentativas = (ids: string[]) => hub.db.tentativa.count({ where: { entregaId: { in: ids } } });

  /** One metric of a worker's /metrics, summed over the series whose labels include `rotulos`. */
  async function metrica(w: TestDeliveryWorker, nome: string, rotulos: Record<string, string> = {}): Promise<number> {
    const texto = await (await fetch(`${w.url}/metrics`)).text();
    return texto
      .split('\n')
      .filter((l) => l.startsWith(`${nome}{`) || l.startsWith(`${nome} `))
      .filter((l) => Object.entries(rotulos).every(([k, v]) => l.includes(`${k}="${v}"`)))
      .reduce((soma, l) => soma + Number(l.split(' ').at(-1)), 0);
  }
  /** Jobs of every worker that went through a delay queue because of a circuit (the fallback only). */
  const pelaFilaDeAtraso = async () =>
    (await Promise.all(workers.map((w) => metrica(w, 'hub_delivery_jobs_total', { desfecho: 'circuito' })))).reduce(
      (a, b) => a + b,
      0,
    );
  const encaminhados = async () =>
    (await Promise.all(workers.map((w) => metrica(w, 'hub_delivery_jobs_total', { desfecho: 'encaminhado' })))).reduce(
      (a, b) => a + b,
      0,
    );
  /** The origin's own queue as RabbitMQ sees it (jobs ready, consumers), or undefined while it does not exist. */
  async function filaDe(origem: string) {
    const { id } = await linha(origem);
    return workers[0]!.broker
      .withChannel((ch) => ch.checkQueue(hub.topologia.filaDoDestino(id)))
      .catch(() => undefined);
  }
  /**
   * Until `n` jobs of the origin sit ready in its own queue, which nobody consumes. A consumer
   * cancelled while its job is under way (the probe's) is still counted by the quorum queue until
   * that job is settled: `consumidores` allows for it.
   */
  const sentados = (origem: string, n: number, what: string, consumidores = 0) =>
    waitFor(
      async () => {
        const fila = await filaDe(origem);
        if (fila?.messageCount === n && fila.consumerCount <= consumidores) return true;
        // What the queue looked like last, for the timeout's message.
        throw new Error(`the queue had ${fila?.messageCount} job(s) and ${fila?.consumerCount} consumer(s)`);
      },
      { timeoutMs: 20_000, what },
    );
  /** Until every worker has read the destinations `vezes` more times (and obeyed them) since called. */
  async function leituras(vezes: number) {
    const lidas = () => Promise.all(workers.map((w) => metrica(w, 'hub_delivery_destination_reads_total')));
    const antes = await lidas();
    await waitFor(async () => (await lidas()).every((n, i) => n >= antes[i]! + vezes), {
      what: `each worker reading the destinations ${vezes} more times`,
    });
  }
  const entregar = async (c: Awaited<ReturnType<typeof cenario>>, a: Assinatura, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i += 1)
      ids.push(...(await c.entregar([a], { broker: workers[0]!.broker })).map((t) => t.entrega_id));
    return ids;
  };

  it('When attempts to an origin keep failing, then its circuit opens in the row once, with the failures counted; both workers send its jobs to its own queue, which nobody consumes: they stay there and no attempt is made or counted, for old deliveries or new ones', async () => {
    modo = 'falhar';
    const [um, dois] = await doisWorkers({ DELIVERY_CIRCUIT_OPEN_FOR: '10m', DELIVERY_CIRCUIT_OPEN_MAX: '10m' });
    const { c, a, origem } = await assinatura('abre');
    await waitFor(() => [um!, dois!].every((w) => w.destinos.regras(origem).circuito === 'fechado'));
    const ids = await entregar(c, a, 6);
    await noCircuito(origem, (s) => s === 'aberto', 'the circuit open');
    await waitFor(() => [um!, dois!].every((w) => w.destinos.regras(origem).circuito === 'aberto'), {
      what: 'both workers obeying the open circuit',
    });

    const [abertura, ...depois] = await historico(origem);
    expect(depois).toEqual([]);
    expect(abertura).toMatchObject({ de: 'fechado', para: 'aberto', motivo: 'falhas', por: null });
    // One worker's share of the threshold: 2 of 4 failures, all of its attempts.
    expect(abertura!.falhas).toBeGreaterThanOrEqual(2);
    expect(abertura!.falhas).toBe(abertura!.tentativas);
    expect(abertura!.abertoAte!.getTime() - abertura!.em.getTime()).toBe(600_000);
    expect(await linha(origem)).toMatchObject({ circuitoAberturas: 1, circuitoSonda: null });

    // Every job ends up in the origin's own queue (those failing when it opened after their retry's
    // delay), and stays there: nobody consumes it, nothing goes round the delay queues.
    await sentados(origem, ids.length, "every job in the open circuit's own queue");
    const feitas = await tentativas(ids);
    const recebidas = receptor.de('/circuito').length;
    const novas = await entregar(c, a, 3);
    await sentados(origem, ids.length + novas.length, 'the new jobs in the queue too');
    const movidos = await encaminhados();
    await leituras(3);
    expect(await filaDe(origem)).toMatchObject({ messageCount: ids.length + novas.length, consumerCount: 0 });
    expect(await encaminhados()).toBe(movidos);
    expect(await pelaFilaDeAtraso()).toBe(0);
    expect(await tentativas(ids)).toBe(feitas);
    expect(await tentativas(novas)).toBe(0);
    expect(receptor.de('/circuito')).toHaveLength(recebidas);
    const situacoes = await hub.db.entrega.findMany({ where: { id: { in: [...ids, ...novas] } } });
    expect(situacoes.filter((e) => novas.includes(e.id)).map((e) => [e.situacao, e.tentativasNoCicloAtual])).toEqual(
      Array(3).fill(['pendente', 0]),
    );
    // No claim is kept by a held job (the sweeper leaves held deliveries alone).
    expect(situacoes.map((e) => e.reivindicacao ?? null)).toEqual(Array(situacoes.length).fill(null));
    // Its state and its one transition, as each worker exports them.
    for (const w of [um!, dois!]) expect(await metrica(w, 'hub_delivery_circuit_state', { origem })).toBe(2);
    expect(
      (await metrica(um!, 'hub_delivery_circuit_transitions_total', { origem, para: 'aberto' })) +
        (await metrica(dois!, 'hub_delivery_circuit_transitions_total', { origem, para: 'aberto' })),
    ).toBe(1);

    // Closed by hand (what hub-api's POST /destino/{id}/fechar-circuito writes): the queue is consumed
    // again and the held jobs are attempted, each delivery once more.
    modo = 'aceitar';
    await hub.db.destino.update({
      where: { origem },
      data: { circuito: 'fechado', circuitoDesde: new Date(), circuitoAberturas: 0, circuitoAbertoAte: null },
    });
    const todas = [...ids, ...novas];
    await waitFor(
      async () =>
        (await hub.db.entrega.count({ where: { id: { in: todas }, situacao: 'concluida' } })) === todas.length,
      { timeoutMs: 20_000, what: 'every delivery concluded once the circuit was closed' },
    );
    expect(await tentativas(todas)).toBe(feitas + todas.length);
  });

  it('When the open period ends and the probe fails, then the circuit opens again for twice as long; while a probe is under way no other request reaches the origin; when a probe succeeds, the circuit closes, the queue is consumed at the destination share and every delivery is concluded once', async () => {
    modo = 'falhar';
    // The probe held by the receiver stays under way until the test answers it (no timeout meanwhile).
    const [um, dois] = await doisWorkers({
      DELIVERY_CIRCUIT_OPEN_FOR: '300ms',
      DELIVERY_CIRCUIT_OPEN_MAX: '2s',
      DELIVERY_TIMEOUT: '60s',
    });
    const { c, a, origem } = await assinatura('sonda');
    await waitFor(() => [um!, dois!].every((w) => w.destinos.regras(origem).circuito === 'fechado'));
    const ids = await entregar(c, a, 6);
    await waitFor(async () => (await historico(origem)).some((t) => t.motivo === 'sonda_falhou'), {
      timeoutMs: 20_000,
      what: 'a probe that failed',
    });
    const [abertura, meio, reaberta] = await historico(origem);
    expect([abertura, meio, reaberta].map((t) => [t?.de, t?.para, t?.motivo])).toEqual([
      ['fechado', 'aberto', 'falhas'],
      ['aberto', 'meio_aberto', 'periodo_encerrado'],
      ['meio_aberto', 'aberto', 'sonda_falhou'],
    ]);
    expect(reaberta!.detalhe).toBe('the probe failed (HTTP 500)');
    const duracao = (t: typeof abertura) => t!.abertoAte!.getTime() - t!.em.getTime();
    expect([duracao(abertura), duracao(reaberta)]).toEqual([300, 600]);

    // The next probe is held by the receiver: meanwhile nothing else reaches the origin.
    modo = 'segurar';
    const antes = receptor.de('/circuito').length;
    await waitFor(() => presos.length === 1, { timeoutMs: 20_000, what: 'the next probe at the receiver' });
    await noCircuito(origem, (s) => s === 'meio_aberto', 'the circuit half-open');
    await waitFor(() => [um!, dois!].every((w) => w.destinos.regras(origem).circuito === 'meio_aberto'), {
      what: 'both workers obeying the half-open circuit',
    });
    // The probe's worker stops consuming the queue while the probe is under way, as does the other:
    // the other jobs sit in the queue.
    await sentados(origem, ids.length - 1, 'the other jobs in the queue, unconsumed, during the probe', 1);
    await leituras(2);
    expect((await filaDe(origem))?.messageCount).toBe(ids.length - 1);
    expect(receptor.de('/circuito').length - antes).toBe(1);
    expect(receptor.abertos()).toBe(1);

    // The probe answered: the circuit closes and its queue is consumed at the destination's share
    // again (5 jobs for each worker), no longer one at a time: the other jobs reach the receiver
    // together, which one job per worker could not.
    presos.shift()!.writeHead(204).end();
    await noCircuito(origem, (s) => s === 'fechado', 'the circuit closed');
    await waitFor(() => presos.length === ids.length - 1, {
      timeoutMs: 20_000,
      what: 'the other jobs at the receiver together once the circuit closed',
    });
    modo = 'aceitar';
    for (const res of presos.splice(0)) res.writeHead(204).end();
    expect((await historico(origem)).at(-1)).toMatchObject({
      de: 'meio_aberto',
      para: 'fechado',
      motivo: 'sonda_bem_sucedida',
      detalhe: 'the probe succeeded (HTTP 204)',
    });
    expect(await linha(origem)).toMatchObject({ circuitoAberturas: 0, circuitoSonda: null, circuitoAbertoAte: null });
    // Every transition is one line of history: each probe taken was followed by its one result.
    const transicoes = await historico(origem);
    transicoes.forEach((t, i) => {
      if (i > 0) expect(t.de).toBe(transicoes[i - 1]!.para);
    });
    await waitFor(
      async () => (await hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'concluida' } })) === ids.length,
      { timeoutMs: 20_000, what: 'every delivery concluded once the circuit closed' },
    );
    const sucessos = await hub.db.tentativa.groupBy({
      by: ['entregaId'],
      where: { entregaId: { in: ids }, sucesso: true },
      _count: true,
    });
    expect(sucessos.map((s) => s._count)).toEqual(Array(ids.length).fill(1));
    await waitFor(
      async () =>
        (await Promise.all([um!, dois!].map((w) => metrica(w, 'hub_delivery_circuit_state', { origem })))).join() ===
        '0,0',
      { what: 'both workers exporting the closed state' },
    );
  });

  it('When the probe holder died (its lease in the row ran out), then another job takes the probe over and the circuit closes; while the lease lasts, the jobs wait', async () => {
    modo = 'aceitar';
    const [um, dois] = await doisWorkers({ DELIVERY_CIRCUIT_OPEN_FOR: '300ms' });
    const { c, a, origem } = await assinatura('herdada');
    // What a worker killed during its probe leaves: half-open, its token, a lease still running.
    const sonda = crypto.randomUUID();
    await hub.db.destino.update({
      where: { origem },
      data: {
        circuito: 'meio_aberto',
        circuitoDesde: new Date(),
        circuitoAberturas: 1,
        circuitoSonda: sonda,
        circuitoSondaAte: new Date(Date.now() + 600_000),
      },
    });
    await waitFor(() => [um!, dois!].every((w) => w.destinos.regras(origem).circuito === 'meio_aberto'));
    const ids = await entregar(c, a, 3);
    await sentados(origem, ids.length, 'the jobs in the queue while the lease lasts');
    await leituras(2);
    expect(await filaDe(origem)).toMatchObject({ messageCount: ids.length, consumerCount: 0 });
    expect(await tentativas(ids)).toBe(0);

    // The lease runs out (the clock would do it; the row is moved there).
    await hub.db.destino.update({ where: { origem }, data: { circuitoSondaAte: new Date(Date.now() - 1000) } });
    await noCircuito(origem, (s) => s === 'fechado', 'the circuit closed by the new probe');
    expect((await historico(origem)).map((t) => [t.de, t.para, t.motivo])).toEqual([
      ['meio_aberto', 'meio_aberto', 'sonda_expirada'],
      ['meio_aberto', 'fechado', 'sonda_bem_sucedida'],
    ]);
    await waitFor(
      async () => (await hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'concluida' } })) === ids.length,
      { timeoutMs: 20_000, what: 'every delivery concluded' },
    );
    expect(await tentativas(ids)).toBe(ids.length);
  });
  it('When a job asks for the probe and finds the circuit closed meanwhile (by hand, or by a probe elsewhere), then it is attempted now, not sent round a delay queue', async () => {
    modo = 'aceitar';
    const { c, a, origem } = await assinatura('fechou');
    // Open, its period over: the worker reads it so once (its next read is minutes away)…
    await hub.db.destino.update({
      where: { origem },
      data: {
        circuito: 'aberto',
        circuitoDesde: new Date(),
        circuitoAberturas: 1,
        circuitoAbertoAte: new Date(Date.now() - 1000),
      },
    });
    workers.push(
      await startDeliveryWorkerForTests(hub, { DELIVERY_DESTINOS_REFRESH: '10m', DELIVERY_CIRCUIT_MIN_FAILURES: '4' }),
    );
    const [w] = workers;
    expect(w!.destinos.regras(origem)).toMatchObject({ circuito: 'aberto', sondaDevida: true });
    // …and an operator closes it before the job asks for the probe.
    await hub.db.destino.update({
      where: { origem },
      data: { circuito: 'fechado', circuitoDesde: new Date(), circuitoAberturas: 0, circuitoAbertoAte: null },
    });
    const ids = await entregar(c, a, 1);
    await waitFor(
      async () => (await hub.db.entrega.count({ where: { id: { in: ids }, situacao: 'concluida' } })) === 1,
      { timeoutMs: 20_000, what: 'the delivery concluded' },
    );
    expect(await tentativas(ids)).toBe(1);
    expect(await pelaFilaDeAtraso()).toBe(0);
    expect(await historico(origem)).toEqual([]);
  });
});
