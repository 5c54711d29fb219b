import http from 'node:http';

export interface RawResponse {
  status: number;
  contentType: string;
  text: string;
  ms: number;
  /** The answer's headers (empty when no answer came). */
  headers?: http.IncomingHttpHeaders;
  /** Set when no HTTP answer came: the connection was reset, or nothing came within the timeout. */
  error?: string;
}

export interface RawRequest {
  method: string;
  /** Sent byte for byte (fetch would normalise "..", "%2e%2e" and re-encode). */
  path: string;
  headers?: Record<string, string>;
  body?: Buffer;
  timeoutMs?: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** One request with node:http, exactly as given; never rejects (a missing answer is `error`). */
export function sendRaw(baseUrl: string, request: RawRequest): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const started = performance.now();
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { ...request.headers };
    if (request.body) headers['content-length'] = request.body.length;
    const req = http.request(
      { host: url.hostname, port: url.port, method: request.method, path: request.path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            text: Buffer.concat(chunks).toString('utf8'),
            ms: performance.now() - started,
            headers: res.headers,
          }),
        );
        res.on('error', (error) => done(error.message));
      },
    );
    const done = (error: string) =>
      resolve({ status: 0, contentType: '', text: '', ms: performance.now() - started, headers: {}, error });
    req.setTimeout(request.timeoutMs ?? 10_000, () => req.destroy(new Error('no answer in time')));
    req.on('error', (error) => done((error as NodeJS.ErrnoException).code ?? error.message));
    req.end(request.body);
  });
}

/** Closes the kept-alive connections (teardown). */
export const closeConnections = () => agent.destroy();

/** JSON request helper for the set-up calls, which must succeed. */
export async function api<T = Record<string, unknown>>(
  baseUrl: string,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const response = await sendRaw(baseUrl, {
    method,
    path,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
  });
  if (response.error) throw new Error(`${method} ${path}: ${response.error}`);
  return { status: response.status, body: (response.text ? JSON.parse(response.text) : undefined) as T };
}
