// The floor's delivery (bench/floor): the least work that delivers a job the way the delivery worker
// does. Each job of the quorum queue is signed (node:crypto Ed25519 over `id.timestamp.body`) and
// POSTed over a keep-alive connection; the outcomes gathered meanwhile are recorded by one batched,
// durable UPDATE (state and attempt count of each delivery); failed jobs go to the delay queue (with
// confirms) to come back after the platform's retry step for their count of failures; then every job
// of the batch is acknowledged.
// Environment: FLOOR_DATABASE_URL, FLOOR_RABBITMQ_URL.
import { generateKeyPairSync, sign } from 'node:crypto';
import http from 'node:http';
import { type AmqpMessage, amqp, declararFilas, FILA, filaDeAtraso, pg, publicarConfirmado } from './deps';

/** Jobs taken at once (the platform's DELIVERY_PREFETCH default). */
const PREFETCH = 400;
const REGISTRAR = `
  update entrega set situacao = r.situacao, tentativas = entrega.tentativas + 1, atualizada_em = now()
  from unnest($1::uuid[], $2::int2[]) as r (id, situacao) where entrega.id = r.id`;
const CONCLUIDA = 1;
const FALHOU = 2;

async function main() {
  const { privateKey } = generateKeyPairSync('ed25519');
  const banco = new pg.Pool({ connectionString: process.env.FLOOR_DATABASE_URL!, max: 1 });
  const conexao = await amqp.connect(process.env.FLOOR_RABBITMQ_URL!);
  const canal = await conexao.createConfirmChannel();
  await declararFilas(canal);
  await canal.prefetch(PREFETCH);
  const agente = new http.Agent({ keepAlive: true, maxSockets: 100, scheduling: 'lifo' });
  const destinos = new Map<string, URL>();

  let feitos: { mensagem: AmqpMessage; ok: boolean }[] = [];
  let registrando = false;
  const registrar = () => {
    if (registrando || feitos.length === 0) return;
    const lote = feitos;
    feitos = [];
    registrando = true;
    const falhas = lote.filter((f) => !f.ok);
    banco
      .query(REGISTRAR, [
        lote.map((f) => f.mensagem.properties.messageId),
        lote.map((f) => (f.ok ? CONCLUIDA : FALHOU)),
      ])
      .then(() =>
        publicarConfirmado(
          canal,
          falhas.map(({ mensagem }) => {
            const vezes = Number(mensagem.properties.headers?.falhas ?? 0) + 1;
            return {
              fila: filaDeAtraso(vezes),
              id: mensagem.properties.messageId!,
              corpo: mensagem.content,
              headers: { ...mensagem.properties.headers, falhas: vezes },
            };
          }),
        ),
      )
      .then(
        () => {
          for (const f of lote) canal.ack(f.mensagem);
        },
        // Unacknowledged, the jobs come back when the channel closes: the floor just stops.
        (erro: Error) => {
          process.stderr.write(`${erro.message}\n`);
          process.exit(1);
        },
      )
      .finally(() => {
        registrando = false;
        registrar();
      });
  };
  const concluir = (mensagem: AmqpMessage, ok: boolean) => {
    feitos.push({ mensagem, ok });
    registrar();
  };

  await canal.consume(FILA, (mensagem) => {
    if (!mensagem) return;
    const id = mensagem.properties.messageId!;
    const url = String(mensagem.properties.headers?.url);
    let destino = destinos.get(url);
    if (!destino) {
      destino = new URL(url);
      destinos.set(url, destino);
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const assinatura = sign(
      null,
      Buffer.concat([Buffer.from(`${id}.${timestamp}.`), mensagem.content]),
      privateKey,
    ).toString('base64');
    const pedido = http.request(destino, {
      method: 'POST',
      agent: agente,
      headers: {
        'content-type': 'application/json',
        'content-length': String(mensagem.content.length),
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': `v1a,${assinatura}`,
      },
    });
    let terminou = false;
    const fim = (ok: boolean) => {
      if (terminou) return;
      terminou = true;
      concluir(mensagem, ok);
    };
    pedido.setTimeout(10_000, () => pedido.destroy(new Error('timeout')));
    pedido.on('response', (res) => {
      res.resume();
      res.on('end', () => fim(res.statusCode! >= 200 && res.statusCode! < 300));
    });
    pedido.on('error', () => fim(false));
    pedido.end(mensagem.content);
  });
  process.stdout.write(`${JSON.stringify({ url: 'http://127.0.0.1:0', msg: 'floor-worker listening' })}\n`);
  process.once('SIGTERM', () => {
    agente.destroy();
    void Promise.allSettled([conexao.close(), banco.end()]).then(() => process.exit(0));
  });
}

void main();
