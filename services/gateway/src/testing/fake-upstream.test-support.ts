import { buildOpenApi, listen, type RouteSpec, type RunningServer } from '@hub/http';
import express from 'express';

export interface SeenRequest {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  bodyBytes: number;
  /** The port the request's connection came from: one per connection the gateway keeps. */
  remotePort: number | undefined;
}

export interface FakeUpstream extends RunningServer {
  name: string;
  /** Requests received whole (their body ended). */
  seen: SeenRequest[];
  /** Paths of requests whose headers arrived (before their body). */
  started: string[];
  /** Paths of requests whose connection closed before their answer was written. */
  interrupted: string[];
  /** …/recusa-cedo: body bytes received after its early 401, when its request ended or its connection closed. */
  afterEarlyAnswer: { bytes: number; ended: boolean }[];
  ready: boolean;
  /** How many times its readiness was asked. */
  readinessAsked: number;
}

/**
 * A small real HTTP server standing in for a service, so the gateway's own behaviour can be
 * observed from both sides. It echoes what it received; …/lento never answers, …/quebra dies mid-response,
 * …/reinicia resets the connection before answering, …/reinicia-no-meio resets it mid-response,
 * …/devagar?ms=N (or any path with ?atraso=N) answers after N ms, …/recusa-cedo answers 401 before its body (after ?cedo=N ms; counting what comes after), …/cabecalhos answers with hop-by-hop headers,
 * repeated Set-Cookie and a Vary of its own (and the request's headers in the body), …/eco answers the request's body, …/dicas sends a
 * 103 Early Hints before its answer, …/grande?bytes=N answers N bytes (as fast as they are read).
 */
export async function startFakeUpstream(
  name: string,
  specs: RouteSpec[] = [],
  /** A Unix socket it serves on too (the service's *_SOCKET). */
  options: { socket?: string } = {},
): Promise<FakeUpstream> {
  const app = express();
  let upstream: FakeUpstream;
  app.get('/saude/prontidao', (_req, res) => {
    upstream.readinessAsked += 1;
    res.status(upstream.ready ? 200 : 503).json({ situacao: upstream.ready ? 'ok' : 'indisponivel', servico: name });
  });
  app.get('/openapi.json', (_req, res) => {
    res.json(buildOpenApi(name, specs));
  });
  app.use((req, res) => {
    upstream.started.push(req.originalUrl);
    res.on('close', () => {
      if (!res.writableFinished) upstream.interrupted.push(req.originalUrl);
    });
    if (req.path.endsWith('/recusa-cedo')) {
      let bytes = 0;
      req.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      req.on('end', () => upstream.afterEarlyAnswer.push({ bytes, ended: true }));
      // Answered already, the request is not told when its connection goes: the socket is.
      req.socket.once('close', () => {
        if (!req.complete) upstream.afterEarlyAnswer.push({ bytes, ended: false });
      });
      // ?cedo=N: the 401 after N ms, still before the body.
      setTimeout(() => res.status(401).json({ status: 401, codigo: 'nao_autenticado' }), Number(req.query.cedo ?? 0));
      return;
    }
    let bodyBytes = 0;
    const eco: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
      if (req.path.endsWith('/eco')) eco.push(chunk);
    });
    req.on('end', () => {
      upstream.seen.push({
        method: req.method,
        url: req.originalUrl,
        headers: req.headers,
        bodyBytes,
        remotePort: req.socket.remotePort,
      });
      if (req.path.endsWith('/lento')) return;
      // Any path: ?atraso=N answers after N ms (a publication answered slowly, say).
      if (req.query.atraso !== undefined) {
        setTimeout(() => res.json({ servico: name, url: req.originalUrl }), Number(req.query.atraso));
        return;
      }
      if (req.path.endsWith('/eco')) {
        res.type('application/octet-stream').send(Buffer.concat(eco));
        return;
      }
      if (req.path.endsWith('/reinicia')) {
        res.socket?.resetAndDestroy();
        return;
      }
      if (req.path.endsWith('/cabecalhos')) {
        res.writeHead(200, {
          'Content-Type': 'application/json',
          Connection: 'keep-alive, X-Interno',
          'X-Interno': 'segredo',
          'Keep-Alive': 'timeout=5',
          'Set-Cookie': ['a=1', 'b=2'],
          Vary: 'Accept',
        });
        res.end(JSON.stringify({ headers: req.headers, rawHeaders: req.rawHeaders }));
        return;
      }
      if (req.path.endsWith('/reinicia-no-meio')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"parcial":');
        setImmediate(() => res.socket?.resetAndDestroy());
        return;
      }
      if (req.path.endsWith('/grande')) {
        const total = Number(req.query.bytes);
        const chunk = Buffer.alloc(64 * 1024, 'g');
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
        let sent = 0;
        const write = () => {
          while (sent < total && !res.destroyed) {
            const piece = chunk.subarray(0, Math.min(chunk.length, total - sent));
            sent += piece.length;
            if (!res.write(piece)) return void res.once('drain', write);
          }
          if (sent >= total) res.end();
        };
        write();
        return;
      }
      if (req.path.endsWith('/devagar')) {
        setTimeout(() => res.json({ servico: name, url: req.originalUrl }), Number(req.query.ms));
        return;
      }
      if (req.path.endsWith('/dicas')) res.writeEarlyHints({ link: '</estilo.css>; rel=preload; as=style' });
      if (req.path.endsWith('/quebra')) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"parcial":');
        setImmediate(() => res.socket?.destroy());
        return;
      }
      res.json({
        servico: name,
        method: req.method,
        url: req.originalUrl,
        request_id: req.get('x-request-id') ?? null,
        bodyBytes,
      });
    });
  });
  upstream = Object.assign(await listen(app, 0, '127.0.0.1', options), {
    name,
    seen: [] as SeenRequest[],
    started: [] as string[],
    interrupted: [] as string[],
    afterEarlyAnswer: [] as { bytes: number; ended: boolean }[],
    ready: true,
    readinessAsked: 0,
  });
  return upstream;
}
