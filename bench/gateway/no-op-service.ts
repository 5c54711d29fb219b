/**
 * A service that does nothing, for bench/gateway/proxy-cost.ts: node:http, reads the request's body and answers
 * 201 with a small JSON, so that what the rows in front of it spend is the proxy's own work. Its own
 * process; prints its port on stdout. A first argument is a Unix socket it serves on too.
 */
import { rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

const ANSWER = Buffer.from('{"id":"nu","entregas":[]}');

const responder = (req: IncomingMessage, res: ServerResponse) => {
  req.on('data', () => undefined);
  req.on('end', () => {
    res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': ANSWER.length });
    res.end(ANSWER);
  });
};
const server = createServer(responder);
server.keepAliveTimeout = 65_000;
const socket = process.argv[2];
const noSocket = socket ? createServer(responder) : undefined;
if (socket && noSocket) {
  rmSync(socket, { force: true });
  noSocket.keepAliveTimeout = 65_000;
  noSocket.listen(socket);
}
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => {
  noSocket?.close();
  server.close(() => process.exit(0));
});
