// Subscribers for a benchmark, in a process of their own: RECEPTORES (4) local receivers, each
// announced on stdout as a service line (`{"url":…,"msg":"receptor-N listening"}`, what spawnService's
// url() reads) with its /ok path. Apart from the process that measures, so the receivers' work
// (thousands of requests a second) is not counted as waiting in the measured requests.
// Every receiver answers:
//   POST /ok       200; a webhook-id not seen before (by any receiver of the process) is counted
//   POST /falha    500 (a failing subscriber), counted
//   GET /contagem  {"entregues": distinct webhook-ids on /ok, "falhas": requests to /falha,
//                   "ultima": Date.now() when the last new id arrived (0: none)}
//   POST /zerar    forgets every count
// Requests are not kept (only the ids), so a long benchmark does not fill the memory.
import { iniciarReceptor } from '../services/delivery-worker/src/receptor';

async function main() {
  const quantos = Number(process.env.RECEPTORES ?? 4);
  const ids = new Set<string>();
  let falhas = 0;
  let ultima = 0;
  const rotas = {
    '/ok': (req, res) => {
      const id = req.headers['webhook-id'];
      if (typeof id === 'string' && !ids.has(id)) {
        ids.add(id);
        ultima = Date.now();
      }
      res.writeHead(200).end();
    },
    '/falha': (_req, res) => {
      falhas++;
      res.writeHead(500).end();
    },
    '/contagem': (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ entregues: ids.size, falhas, ultima }));
    },
    '/zerar': (_req, res) => {
      ids.clear();
      falhas = 0;
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
