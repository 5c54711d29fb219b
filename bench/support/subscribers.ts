// Subscribers for a benchmark, in a process of their own: RECEPTORES (4) local receivers, each
// announced on stdout as a service line (`{"url":…,"msg":"receptor-N listening"}`, what spawnService's
// url() reads) with its /ok path. Apart from the process that measures, so the receivers' work
// (thousands of requests a second) is not counted as waiting in the measured requests.
// Every receiver answers:
//   POST /ok       200; a webhook-id not seen before (by any receiver of the process) is counted
//   POST /medir    the same, and notes when a new id arrived (bench/support/steady-phase.ts reads it back)
//   POST /lento    the same as /ok, 50 ms later (a healthy but slow subscriber)
//   POST /falha    500 (a failing subscriber), counted
//   POST /mudo     never answers (the worker's timeout ends it), counted
//   GET /contagem  {"entregues": distinct webhook-ids on /ok, /medir and /lento, "falhas": requests to
//                   /falha, "sem_resposta": requests to /mudo, "ultima": Date.now() when the last new id
//                   arrived (0: none)}
//   GET /chegadas  [[webhook-id, arrival, the event's recebido_em], …] of the new ids on /medir, both
//                   as epoch milliseconds (the arrival from performance.now(), so sub-millisecond)
//   POST /zerar    forgets every count
// Requests are not kept (only the ids, and /medir's arrivals), so a long benchmark does not fill the memory.
import type { IncomingMessage } from 'node:http';
import { iniciarReceptor } from '../../services/delivery-worker/src/receptor.test-support';

/** How long /lento takes to answer. */
const LENTO_MS = 50;

async function main() {
  const quantos = Number(process.env.RECEPTORES ?? 4);
  const ids = new Set<string>();
  let chegadas: [string, number, number][] = [];
  let falhas = 0;
  let semResposta = 0;
  let ultima = 0;
  /** The request's webhook-id when it was not seen before (now counted), else undefined. */
  const nova = (req: IncomingMessage) => {
    const id = req.headers['webhook-id'];
    if (typeof id !== 'string' || ids.has(id)) return undefined;
    ids.add(id);
    ultima = Date.now();
    return id;
  };
  const rotas = {
    '/ok': (req, res) => {
      nova(req);
      res.writeHead(200).end();
    },
    '/medir': (req, res, corpo) => {
      const chegada = performance.timeOrigin + performance.now();
      const id = nova(req);
      if (id) chegadas.push([id, chegada, Date.parse((JSON.parse(corpo) as { recebido_em: string }).recebido_em)]);
      res.writeHead(200).end();
    },
    '/lento': (req, res) => {
      nova(req);
      setTimeout(() => res.writeHead(200).end(), LENTO_MS);
    },
    '/falha': (_req, res) => {
      falhas++;
      res.writeHead(500).end();
    },
    '/mudo': () => {
      semResposta++;
    },
    '/contagem': (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ entregues: ids.size, falhas, sem_resposta: semResposta, ultima }));
    },
    '/chegadas': (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(chegadas));
    },
    '/zerar': (_req, res) => {
      ids.clear();
      chegadas = [];
      falhas = 0;
      semResposta = 0;
      ultima = 0;
      res.writeHead(204).end();
    },
  } satisfies Parameters<typeof iniciarReceptor>[0];
  const receptores = await Promise.all(
    Array.from({ length: quantos }, () => iniciarReceptor(rotas, '127.0.0.1', { guardar: false })),
  );
  receptores.forEach((r, i) => {
    process.stdout.write(`${JSON.stringify({ url: r.url('/ok'), msg: `receptor-${i} listening` })}\n`);
  });
  process.once('SIGTERM', () => {
    void Promise.all(receptores.map((r) => r.fechar())).then(() => process.exit(0));
  });
}

void main();
