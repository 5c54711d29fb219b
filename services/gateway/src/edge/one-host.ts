import { badRequest } from '@hub/http';
import type { RequestHandler } from 'express';

/**
 * A request with more than one Host is refused (RFC 9112 §3.2: a server must answer 400). node:http
 * lets it through and reads the first; a proxy in front, or a service, could read another, and route
 * or check it by a name the gateway never saw.
 */
export const oneHost: RequestHandler = (req, _res, next) => {
  const raw = req.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.length === 4 && raw[i]!.toLowerCase() === 'host') hosts += 1;
  next(hosts > 1 ? badRequest('requisicao_invalida', 'a request names one Host; this one names several') : undefined);
};
