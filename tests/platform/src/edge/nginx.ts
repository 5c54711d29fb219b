import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connect } from 'node:tls';
import { waitFor } from '@hub/testing';

export const NGINX = '/usr/sbin/nginx';
const ROOT = path.resolve(__dirname, '../../../..');
const TEMPLATE = path.join(ROOT, 'infra/edge/nginx.conf');

export interface Borda {
  port: number;
  /** The self-signed certificate nginx serves (for localhost, hub.test and 127.0.0.1): the clients' CA. */
  ca: string;
  /** nginx's error log so far, for failure messages. */
  errorLog(): Promise<string>;
  stop(): Promise<void>;
}

export interface BordaOptions {
  /** host:port of the gateway and of hub-api. */
  gateway: string;
  hubApi: string;
  headerTimeout?: string;
  bodyTimeout?: string;
  keepaliveTimeout?: string;
  connPerClient?: number;
  /** worker_processes (auto unless given). */
  workers?: string;
}

/** Fills every {{NAME}} of the template; a name not given is an error (a template and its filler out of step). */
export function render(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{([A-Z_]+)\}\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`infra/edge/nginx.conf names {{${name}}}, which nothing fills in`);
    return value;
  });
}

/** nginx before 1.25.1 has no `http2 on;`: there, HTTP/2 is a parameter of `listen`. */
export function forVersion(conf: string, version: string): string {
  const [major = 0, minor = 0, patch = 0] = version.split('.').map(Number);
  const recente = major > 1 || (major === 1 && (minor > 25 || (minor === 25 && patch >= 1)));
  if (recente) return conf;
  return conf.replace(/^(\s*)http2 on;\n/m, '').replace(/(listen \d+ ssl)/, '$1 http2');
}

/** The installed nginx's version (`nginx -v` says it on stderr), or the command that installs it. */
function versionOf(): string {
  if (!existsSync(NGINX)) throw new Error(`nginx is not installed (${NGINX}): apt-get install -y nginx`);
  const r = spawnSync(NGINX, ['-v'], { encoding: 'utf8' });
  const version = /nginx\/(\d+\.\d+\.\d+)/.exec(`${r.stdout}${r.stderr}`)?.[1];
  if (!version) throw new Error(`${NGINX} -v did not say its version: ${r.stderr}`);
  return version;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A self-signed P-256 certificate made now with the openssl CLI, valid for a day. */
function selfSigned(dir: string): { cert: string; key: string } {
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,DNS:hub.test,IP:127.0.0.1',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

const tlsAnswers = (port: number, ca: string) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });

/**
 * The real Debian nginx with infra/edge/nginx.conf, rendered into a temporary directory of its own
 * (its logs, temporary files, pid and certificate there), on a free port; resolves once it completes
 * a TLS handshake. Fails, naming the command that installs it, when nginx is not installed.
 */
export async function startBorda(options: BordaOptions): Promise<Borda> {
  const version = versionOf();
  const prefix = await mkdtemp(path.join(tmpdir(), 'hub-edge-'));
  try {
    return await run(prefix, version, options);
  } catch (error) {
    await rm(prefix, { recursive: true, force: true });
    throw error;
  }
}

async function run(prefix: string, version: string, options: BordaOptions): Promise<Borda> {
  await mkdir(path.join(prefix, 'tmp'));
  const { cert, key } = selfSigned(prefix);
  const port = await freePort();
  const conf = render(await readFile(TEMPLATE, 'utf8'), {
    PREFIX: prefix,
    PORT: String(port),
    CERT: cert,
    KEY: key,
    GATEWAY: options.gateway,
    HUB_API: options.hubApi,
    PROBLEMAS: path.join(ROOT, 'infra/edge/problemas'),
    HEADER_TIMEOUT: options.headerTimeout ?? '10s',
    BODY_TIMEOUT: options.bodyTimeout ?? '30s',
    KEEPALIVE_TIMEOUT: options.keepaliveTimeout ?? '60s',
    CONN_PER_CLIENT: String(options.connPerClient ?? 50),
    WORKERS: options.workers ?? 'auto',
  });
  await writeFile(path.join(prefix, 'nginx.conf'), forVersion(conf, version));
  const errorLog = path.join(prefix, 'error.log');
  const args = ['-p', prefix, '-e', errorLog, '-c', path.join(prefix, 'nginx.conf')];
  const child: ChildProcess = spawn(NGINX, [...args, '-g', `daemon off; pid ${path.join(prefix, 'nginx.pid')};`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let saida = '';
  child.stdout?.on('data', (chunk: Buffer) => (saida += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (saida += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ca = await readFile(cert, 'utf8');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGQUIT');
      const cut = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(cut);
    }
    await rm(prefix, { recursive: true, force: true });
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`nginx exited: ${saida}`);
        return tlsAnswers(port, ca);
      },
      { timeoutMs: 10_000, what: 'nginx to answer' },
    );
  } catch (error) {
    const log = await readFile(errorLog, 'utf8').catch(() => '');
    await stop();
    throw new Error(`${(error as Error).message}\n${saida}\n${log}`);
  }
  return { port, ca, errorLog: () => readFile(errorLog, 'utf8').catch(() => ''), stop };
}
