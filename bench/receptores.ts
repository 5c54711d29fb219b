// Subscribers for a benchmark, in a process of their own: RECEPTORES (4) local receivers answering
// 200 on /ok, each announced on stdout as a service line (`{"url":…,"msg":"receptor-N listening"}`,
// what spawnService's url() reads). Apart from the process that measures, so the receivers' work
// (thousands of requests a second) is not counted as waiting in the measured requests.
import { iniciarReceptor } from '../services/delivery-worker/src/receptor';

async function main() {
  const quantos = Number(process.env.RECEPTORES ?? 4);
  const receptores = await Promise.all(
    Array.from({ length: quantos }, () => iniciarReceptor({ '/ok': (_req, res) => res.writeHead(200).end() })),
  );
  receptores.forEach((r, i) => {
    process.stdout.write(`${JSON.stringify({ url: r.url('/ok'), msg: `receptor-${i} listening` })}\n`);
  });
  process.once('SIGTERM', () => {
    void Promise.all(receptores.map((r) => r.fechar())).then(() => process.exit(0));
  });
}

void main();
