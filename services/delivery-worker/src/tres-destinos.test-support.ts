import { waitFor } from '@hub/testing';
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

const PASSOS = '20ms,40ms,80ms';

/**
 * For a test file: a hub, one receiver answering /ok (200), /erro (500) and /depois (503, then 200
 * to the same delivery), and a worker with short retry delays and no circuit (one receiver is one
 * origin for every subscription: its circuit must not open on the failures). `preparar` runs on the
 * hub before the worker starts. `entregarATodas(n)` subscribes to the three (/erro with 3 attempts,
 * /depois with 4), delivers `n` events to them and waits until every delivery is final.
 */
export function tresDestinos(preparar?: (hub: TestHub) => Promise<void>) {
  const f = {} as { hub: TestHub; worker: TestDeliveryWorker; receptor: Receptor };
  beforeAll(async () => {
    f.hub = await createTestHub();
    await preparar?.(f.hub);
    const vistas = new Set<string>();
    f.receptor = await iniciarReceptor({
      '/ok': (_req, res) => res.writeHead(200).end('recebido'),
      '/erro': (_req, res) => res.writeHead(500).end('falhou'),
      '/depois': (req, res) => {
        const id = String(req.headers['webhook-id']);
        res.writeHead(vistas.has(id) ? 200 : 503).end();
        vistas.add(id);
      },
    });
    f.worker = await startDeliveryWorkerForTests(f.hub, {
      DELIVERY_RETRY_DELAYS: PASSOS,
      DELIVERY_CIRCUIT_MIN_FAILURES: '0',
    });
  });
  afterAll(async () => {
    await f.worker?.close();
    if (f.worker) await deleteTestTopology(f.hub);
    await f.receptor?.fechar();
    await f.hub?.close();
  });
  const entregarATodas = async (eventos: number): Promise<Assinatura[]> => {
    const c = await cenario(f.hub);
    const assinaturas = [
      await c.assinar(f.receptor.url('/ok')),
      await c.assinar(f.receptor.url('/erro'), 3),
      await c.assinar(f.receptor.url('/depois'), 4),
    ];
    const trabalhos = (
      await Promise.all(Array.from({ length: eventos }, () => c.entregar(assinaturas, { broker: f.worker.broker })))
    ).flat();
    await waitFor(
      async () =>
        (await f.hub.db.entrega.count({
          where: { id: { in: trabalhos.map((t) => t.entrega_id) }, situacao: { in: ['concluida', 'fila_de_erro'] } },
        })) === trabalhos.length,
      { timeoutMs: 45_000, what: 'every delivery final' },
    );
    return assinaturas;
  };
  return { f, entregarATodas };
}
