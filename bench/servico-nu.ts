/**
 * A service that does nothing, for bench/gateway.ts: node:http, reads the request's body and answers
 * 201 with a small JSON, so that what the rows in front of it spend is the proxy's own work. Its own
 * process; prints its port on stdout.
 */
import { createServer } from 'node:http';

const ANSWER = Buffer.from('{"id":"nu","entregas":[]}');

const server = createServer((req, res) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': ANSWER.length });
    res.end(ANSWER);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
