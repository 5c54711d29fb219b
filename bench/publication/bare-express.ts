/**
 * The machine's ceiling for bench/publication/throughput-and-latency.ts: a bare express 5 app whose one handler
 * parses the JSON body (express.json, the same 1 MB limit as the services) and answers 201 with a small JSON,
 * nothing else. Run as its own process (as each service is); prints its port on stdout.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type Express from 'express';

const require = createRequire(path.resolve(__dirname, '../../packages/http/package.json'));
const express = require('express') as typeof Express;

const app = express();
app.use(express.json({ limit: '1mb' }));
app.post('/eventos', (req, res) => {
  res.status(201).json({ id: 'nu', entidade_id: (req.body as { entidade_id?: string }).entidade_id });
});
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as { port: number }).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
