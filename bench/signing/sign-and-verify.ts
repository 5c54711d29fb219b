// Signing and verification speed (@hub/signing): `npx tsx bench/signing/sign-and-verify.ts`
// (BENCH_ITERATIONS, default 5000). Prints a markdown table for docs/benchmarks.md.
import { createPublicKey, verify } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { addKey, generateKey, publicJwks, signersOf } from '../../packages/signing/src/keys';
import { signedContent, signWebhook } from '../../packages/signing/src/sign';
import { verifyWebhook } from '../../packages/signing/src/verify';

/** The part of tweetnacl used here: @hub/signing's own copy, so the benchmark adds no dependency. */
const nacl = createRequire(path.resolve(__dirname, '../../packages/signing/package.json'))('tweetnacl') as {
  sign: { detached: { verify(message: Uint8Array, signature: Uint8Array, publicKey: Uint8Array): boolean } };
};

const iterations = Number(process.env.BENCH_ITERATIONS ?? 5000);
const body = JSON.stringify({
  id: '0193a1b2-0000-7000-8000-000000000001',
  tipo: 'pedido.criado',
  versao_do_esquema: 1,
  entidade_id: 'P-1',
  ocorrido_em: '2026-11-21T21:00:00.000Z',
  recebido_em: '2026-11-21T21:00:00.010Z',
  aplicativo_publicador_id: '0193a1b2-0000-7000-8000-000000000002',
  dados: { itens: Array.from({ length: 20 }, (_, i) => ({ sku: `SKU-${i}`, quantidade: i + 1, preco: 10.5 })) },
});

function time(name: string, fn: (i: number) => unknown): string {
  for (let i = 0; i < Math.min(200, iterations); i++) fn(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn(i);
  const micros = Number(process.hrtime.bigint() - start) / 1000 / iterations;
  return `| ${name} | ${iterations} | ${micros.toFixed(1)} | ${Math.round(1e6 / micros).toLocaleString('en-US')} |`;
}

const one = { keys: [generateKey()] };
const two = addKey(one).set;
const now = Math.floor(Date.now() / 1000);
const headersOne = signWebhook({ id: 'e1', timestamp: now, body }, signersOf(one));
const headersTwo = signWebhook({ id: 'e1', timestamp: now, body }, signersOf(two));
const jwksOne = publicJwks(one);
const jwksTwo = publicJwks(two);
const signerOne = signersOf(one);
const signerTwo = signersOf(two);
const publicKey = createPublicKey(signerOne[0]!.privateKey);
const signature = Buffer.from(headersOne['webhook-signature'].slice(4), 'base64');
const content = signedContent('e1', now, body);
const naclKey = Uint8Array.from(Buffer.from(jwksOne.keys[0]!.x, 'base64url'));

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
process.stdout.write(
  `${os.cpus().length} × ${cpu}, Node ${process.version}, body ${body.length} bytes, load average ${os.loadavg()[0]!.toFixed(1)}\n\n`,
);
process.stdout.write('| operation | iterations | µs each | per second |\n|---|---:|---:|---:|\n');
for (const line of [
  time('signWebhook, 1 active key (node:crypto)', (i) => signWebhook({ id: `e${i}`, timestamp: now, body }, signerOne)),
  time('signWebhook, 2 active keys (rotation overlap)', (i) =>
    signWebhook({ id: `e${i}`, timestamp: now, body }, signerTwo),
  ),
  time('verifyWebhook, 1 key (tweetnacl, portable)', () =>
    verifyWebhook(headersOne, body, jwksOne, { now, acceptAnySubscription: true }),
  ),
  time('verifyWebhook, 2 keys and 2 signatures', () =>
    verifyWebhook(headersTwo, body, jwksTwo, { now, acceptAnySubscription: true }),
  ),
  time('raw Ed25519 verify, node:crypto (for comparison)', () => verify(null, content, publicKey, signature)),
  time('raw Ed25519 verify, tweetnacl', () => nacl.sign.detached.verify(content, signature, naclKey)),
]) {
  process.stdout.write(`${line}\n`);
}
