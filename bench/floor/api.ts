// The floor's publication (bench/floor): the least work that accepts an event the way hub-api does.
// POST /eventos/<conjunto>: the body is taken as it is (no validation, no auth); the event and one
// delivery per subscription of that set go into PostgreSQL in one durable transaction shared by every
// request that arrived meanwhile (group commit: one INSERT … SELECT FROM unnest per table); then each
// delivery's job (its body ready to sign, the URL in a header) is published with confirms to the
// quorum queue, and only then is 201 answered, with the ids. No outbox table: jobs go right after the
// commit. Environment: FLOOR_DATABASE_URL, FLOOR_RABBITMQ_URL, FLOOR_ASSINATURAS (JSON: set → URLs).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { uuidv7 } from '../../packages/database/src/ids';
import { amqp, declararFilas, FILA, pg, publicarConfirmado } from './deps';

interface Pendente {
  id: string;
  corpo: string;
  entregas: { id: string; url: string; corpo: Buffer }[];
  res: http.ServerResponse;
}

/** Transactions in flight at once: the next batch gathers while one commits. */
const EM_VOO = 2;
const INSERIR = `
  with evento as (
    insert into evento (id, corpo) select * from unnest($1::uuid[], $2::text[])
  )
  insert into entrega (id, evento_id, url) select * from unnest($3::uuid[], $4::uuid[], $5::text[])`;

async function main() {
  const assinaturas = JSON.parse(process.env.FLOOR_ASSINATURAS ?? '{}') as Record<string, string[]>;
  const banco = new pg.Pool({ connectionString: process.env.FLOOR_DATABASE_URL!, max: EM_VOO });
  const conexao = await amqp.connect(process.env.FLOOR_RABBITMQ_URL!);
  const canal = await conexao.createConfirmChannel();
  await declararFilas(canal);

  let fila: Pendente[] = [];
  let emVoo = 0;
  const gravar = () => {
    if (emVoo >= EM_VOO || fila.length === 0) return;
    const lote = fila;
    fila = [];
    emVoo++;
    const entregas = lote.flatMap((p) => p.entregas.map((e) => [e.id, p.id, e.url] as const));
    banco
      .query(INSERIR, [
        lote.map((p) => p.id),
        lote.map((p) => p.corpo),
        entregas.map((e) => e[0]),
        entregas.map((e) => e[1]),
        entregas.map((e) => e[2]),
      ])
      .then(() =>
        publicarConfirmado(
          canal,
          lote.flatMap((p) =>
            p.entregas.map((e) => ({ fila: FILA, id: e.id, corpo: e.corpo, headers: { url: e.url, falhas: 0 } })),
          ),
        ),
      )
      .then(
        () => {
          for (const p of lote)
            p.res
              .writeHead(201, { 'content-type': 'application/json' })
              .end(`{"id":"${p.id}","entregas":[${p.entregas.map((e) => `"${e.id}"`).join(',')}]}`);
        },
        (erro: Error) => {
          process.stderr.write(`${erro.message}\n`);
          for (const p of lote) p.res.writeHead(503).end();
        },
      )
      .finally(() => {
        emVoo--;
        gravar();
      });
  };

  const server = http.createServer((req, res) => {
    const urls = req.method === 'POST' ? assinaturas[(req.url ?? '').slice('/eventos/'.length)] : undefined;
    if (!urls) {
      req.resume();
      res.writeHead(404).end();
      return;
    }
    const partes: Buffer[] = [];
    req.on('data', (p: Buffer) => partes.push(p));
    req.on('end', () => {
      const corpo = Buffer.concat(partes).toString('utf8');
      const id = uuidv7();
      // What a subscriber gets: the event's id, its subscription, the event as published.
      const cabeca = `{"id":"${id}","assinatura_id":"`;
      const cauda = `","evento":${corpo}}`;
      fila.push({
        id,
        corpo,
        entregas: urls.map((url, i) => ({ id: uuidv7(), url, corpo: Buffer.from(`${cabeca}${i}${cauda}`) })),
        res,
      });
      gravar();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}`, msg: 'floor-api listening' })}\n`);
  });
  process.once('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void Promise.allSettled([conexao.close(), banco.end()]).then(() => process.exit(0));
  });
}

void main();
