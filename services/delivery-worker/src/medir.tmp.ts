import { declareDeliveryTopology } from '@hub/contracts';
import { connectTestBroker } from '@hub/testing';
import { iniciarReceptor } from './receptor';
import { cenario, createTestHub, deleteTestTopology, startDeliveryWorkerForTests } from './testing';

async function main() {
  const hub = await createTestHub();
  const receptor = await iniciarReceptor({ '/ok': (_req, res) => res.writeHead(200).end() });
  const broker = await connectTestBroker('medir');
  await broker.declare((ch) => declareDeliveryTopology(ch, [20, 40], hub.topologia));
  const c = await cenario(hub);
  const assinaturas = [];
  for (let i = 0; i < 50; i += 1) assinaturas.push(await c.assinar(`${receptor.url('/ok')}?a=${i}`));
  const N = Number(process.env.N ?? 100);
  for (let i = 0; i < N; i += 1) await c.entregar(assinaturas, { broker });
  const total = N * 50;
  const worker = await startDeliveryWorkerForTests(hub, {
    DELIVERY_CONCURRENCY_PER_DESTINATION: process.env.CONC ?? '10',
    DELIVERY_PREFETCH: process.env.PREFETCH ?? '400',
    LOG_LEVEL: 'warn',
  });
  const t0 = Date.now();
  for (;;) {
    const n = await hub.db.entrega.count({ where: { situacao: 'concluida' } });
    if (n >= total) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const ms = Date.now() - t0;
  console.log(JSON.stringify({ total, ms, porSegundo: Math.round((total / ms) * 1000) }));
  await worker.close();
  await broker.close();
  await deleteTestTopology(hub, [20, 40]);
  await receptor.fechar();
  await hub.close();
}
main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
