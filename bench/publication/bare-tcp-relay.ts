/**
 * The least any hop can do, for bench/publication/throughput-and-latency.ts: each client connection gets one
 * connection of its own to the target, and the bytes are relayed both ways untouched: no HTTP parsed, no
 * routing, no headers. Below it only the kernel's own forwarding; what a proxy costs above it is HTTP. Its own
 * process; the target is its first argument (http://host:port, or unix:/path.sock); prints its port
 * on stdout.
 */
import { connect, createServer } from 'node:net';

const alvo = process.argv[2] ?? 'http://127.0.0.1:8083';
const onde = alvo.startsWith('unix:')
  ? { path: alvo.slice('unix:'.length) }
  : { host: new URL(alvo).hostname, port: Number(new URL(alvo).port) };

const server = createServer((cliente) => {
  cliente.setNoDelay(true);
  const servico = connect(onde);
  servico.setNoDelay?.(true);
  cliente.pipe(servico);
  servico.pipe(cliente);
  cliente.on('error', () => servico.destroy());
  servico.on('error', () => cliente.destroy());
  cliente.on('close', () => servico.destroy());
  servico.on('close', () => cliente.destroy());
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
