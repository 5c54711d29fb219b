import { createHash } from 'node:crypto';
import { rastroDe } from '@hub/tracing';
import type { Guards } from '@hub/auth';
import { ApiRouter, badRequest, idParams, invalidField } from '@hub/http';
import { currentRequestId } from '@hub/log';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { exigirAtivo, exigirRegistrado } from '../../auth/usuario-ou-aplicativo';
import { withRateLimit } from '../../rate-limit';
import type { AplicativosRepository } from '../aplicativos/aplicativos.repository';
import {
  type EventoCriar,
  eventoCriar,
  eventoCriarDoCorpo,
  eventoDetalhadoSchema,
  eventoDoPublicadorSchema,
} from '../eventos/eventos.schemas';
import { doPublicador, type EventoDetalhadoTexto, jsonDoDetalhado } from './resposta';
import { type Idempotencia, isRecusa, type PublicacaoService, type Publicador } from './publicacao.service';
import type { RegistrarRecusa, Remetente } from './recusas';
import { membrosDoTexto, membrosDoValor, textoDoMembro } from './texto-json';

const refusals = {
  403: 'the application is not registered, is switched off, or does not own the event type',
  409: 'the event type is switched off (tipo_de_evento_inativo) or the schema version is (versao_desativada)',
  422: 'the body breaks a rule, names no existing type or version, dados breaks the schema (at most 50 erros), or the Idempotency-Key was used with another body',
  503: 'sobrecarregado: this instance has as many publications under way as it answers within HUB_PUBLICACOES_TEMPO_ALVO (at most HUB_PUBLICACOES_EM_ANDAMENTO); nothing was read or stored, send it again after Retry-After. banco_indisponivel: the database is not answering (restart, failover); the event was not stored, or stored whole if the connection broke at the commit: send it again after Retry-After with the same Idempotency-Key',
};

/** IETF httpapi idempotency-key draft: a Structured Field string; a bare token is accepted too. */
const CHAVE = /^[\x20-\x7e]{1,255}$/;

/** The header as the OpenAPI document shows it on POST /eventos and POST /evento. */
const cabecalhos = z.object({
  'Idempotency-Key': z
    .string()
    .regex(/^("[\x20-\x7e]{1,255}"|[\x20-\x7e]{1,255})$/)
    .optional()
    .describe(
      'IETF httpapi idempotency-key draft: 1 to 255 printable ASCII characters, optionally as a quoted ' +
        'Structured Field string. The same key with the same body within 24 h answers the first event again ' +
        'and creates nothing; with another body, 422 chave_de_idempotencia_reutilizada; a malformed key, 400 ' +
        'chave_de_idempotencia_invalida.',
    ),
});

function chaveDeIdempotencia(req: Request): string | undefined {
  // node's header (as req.get reads it): POST /eventos runs on node's request (`fast`).
  const valor = req.headers['idempotency-key'] as string | undefined;
  if (valor === undefined) return undefined;
  const chave = valor.length >= 2 && valor.startsWith('"') && valor.endsWith('"') ? valor.slice(1, -1) : valor;
  if (!CHAVE.test(chave))
    throw badRequest('chave_de_idempotencia_invalida', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
  return chave;
}

/**
 * dados exactly as the client wrote it: cut from the raw body, so no digit is lost to a double. A
 * name repeated within one of its objects is refused: the checks (NUL, surrogates, depth, the schema)
 * saw only the last copy, which JSON.parse keeps, while the text stored and delivered holds them all.
 */
function dadosComoEnviados(req: Request, corpo: EventoCriar): string {
  const texto = req.rawText ?? req.rawBody?.toString('utf8').replace(/^\uFEFF/, '');
  const dados = texto && textoDoMembro(texto, 'dados');
  if (!dados) return JSON.stringify(corpo.dados);
  if (membrosDoTexto(dados) !== membrosDoValor(corpo.dados))
    throw invalidField('/dados', 'dados_invalidos', 'must not repeat a member name within one object');
  return dados;
}

const impressao = (req: Request) =>
  createHash('sha256')
    .update(req.rawBody ?? JSON.stringify(req.body ?? null))
    .digest('hex');

/** The Content-Type express's `type('application/json')` sets. */
const JSON_UTF8 = 'application/json; charset=utf-8';

function responder(res: Response, status: number, evento: EventoDetalhadoTexto<object>): void {
  const json = jsonDoDetalhado(evento);
  // A new event's 201 is written with node's own calls (node sets its Content-Length): express's
  // send would hash it for an ETag no client can use (the event is new), 1–2 % of hub-api's CPU per
  // publication, and POST /eventos runs on node's response (`fast`), without express's methods.
  // The reads keep send, and with it ETag and 304.
  if (status === 201) {
    res.statusCode = 201;
    res.setHeader('Content-Type', JSON_UTF8);
    res.end(json);
  } else res.status(status).type('application/json').send(json);
}

/** Who is publishing, as far as the request has told so far (for a refusal's record). */
const remetente = (req: Request, res: Response): Remetente => ({
  clientId: req.aplicativo?.sub ?? null,
  aplicativoId: (res.locals.aplicativoId as string | undefined) ?? null,
  email: req.usuario?.email ?? null,
});

export interface PublicacaoRoutesDeps {
  service: PublicacaoService;
  /** Applications by client id (app.ts gives them cached, dropped when an application changes). */
  aplicativos: {
    buscarPorClientId(clientId: string): Promise<Awaited<ReturnType<AplicativosRepository['buscarPorClientId']>>>;
  };
  registrarRecusa: RegistrarRecusa;
  guards: Guards;
  /** Admission control of the two publication routes, counted together (see `admission` of @hub/http). */
  admission?: RequestHandler;
  /**
   * The budget per application of POST /eventos (`rateLimitPerApplication`), ahead of its admission:
   * applications may reach hub-api without the gateway (docs/operations.md, "Who takes which path").
   */
  rateLimit?: RequestHandler;
}

/** POST /eventos and GET /eventos/{id} (applications), POST /evento and GET /evento/{id} (the panel). */
export function publicacaoRoutes({
  service,
  aplicativos,
  registrarRecusa,
  guards,
  admission,
  rateLimit,
}: PublicacaoRoutesDeps): ApiRouter {
  async function aplicativoDoToken(req: Request, res: Response) {
    const clientId = req.aplicativo!.sub;
    const aplicativo = exigirRegistrado(await aplicativos.buscarPorClientId(clientId), clientId);
    // Known before the next refusal, so a refused publication records which application sent it.
    res.locals.aplicativoId = aplicativo.id;
    exigirAtivo(aplicativo, clientId);
    return aplicativo;
  }

  async function publicar(req: Request, corpo: EventoCriar, publicador: Publicador, escopo: string) {
    const chave = chaveDeIdempotencia(req);
    const idempotencia: Idempotencia | undefined = chave ? { escopo, chave, impressao: impressao(req) } : undefined;
    return service.publicar({
      corpo,
      dadosTexto: dadosComoEnviados(req, corpo),
      publicador,
      idempotencia,
      requestId: currentRequestId() ?? null,
      rastro: rastroDe(req.headers),
    });
  }

  const router = new ApiRouter()
    .route(
      {
        method: 'post',
        path: '/eventos',
        operationId: 'publicarEvento',
        summary:
          "Publish an event as the application of the token (the owner of the type); Idempotency-Key honoured; the deliveries come without their subscriber's name, URL and last error",
        tag: 'Eventos',
        ...guards.application(),
        admission: rateLimit ? withRateLimit(rateLimit, admission) : admission,
        headers: cabecalhos,
        body: eventoCriar,
        bodyParser: eventoCriarDoCorpo,
        response: eventoDoPublicadorSchema,
        status: 201,
        refusals: {
          ...refusals,
          429: 'muitas_requisicoes: more than HUB_PUBLICACOES_POR_MINUTO publications this minute from the application, in this instance (as the gateway counts every request of an application); nothing was read or stored, send it again after Retry-After',
        },
        // The hot route: served on node:http ahead of express (docs/decisions/hub-api-publication-on-node-http.md), so what runs here uses node's request and response.
        fast: true,
      },
      async ({ req, res, body }) => {
        const aplicativo = await aplicativoDoToken(req, res);
        const evento = await publicar(req, body, { aplicativoId: aplicativo.id }, `aplicativo:${aplicativo.id}`);
        responder(res, 201, doPublicador(evento));
      },
    )
    .route(
      {
        method: 'get',
        path: '/eventos/:id',
        operationId: 'obterEventoPublicado',
        summary:
          "One event of the application of the token, with its data and deliveries (without their subscriber's name, URL and last error)",
        tag: 'Eventos',
        ...guards.application(),
        params: idParams,
        response: eventoDoPublicadorSchema,
        refusals: { 403: 'the application is not registered or is switched off' },
      },
      async ({ req, res, params }) => {
        const aplicativo = await aplicativoDoToken(req, res);
        responder(res, 200, doPublicador(await service.buscarDoAplicativo(params.id, aplicativo.id)));
      },
    )
    .route(
      {
        method: 'post',
        path: '/evento',
        operationId: 'publicarEventoDeTeste',
        summary: 'Publish a test event on behalf of the application that owns the type; Idempotency-Key honoured',
        tag: 'Evento',
        ...guards.permission('monitoramento', 'criar'),
        admission,
        headers: cabecalhos,
        body: eventoCriar,
        bodyParser: eventoCriarDoCorpo,
        response: eventoDetalhadoSchema,
        status: 201,
        refusals,
      },
      async ({ req, res, body }) => {
        const email = req.usuario!.email;
        responder(res, 201, await publicar(req, body, { email }, `usuario:${email}`));
      },
    )
    .route(
      {
        method: 'get',
        path: '/evento/:id',
        summary: 'One event with its data, delivery counters and deliveries',
        tag: 'Evento',
        ...guards.permission('monitoramento', 'ler'),
        params: idParams,
        response: eventoDetalhadoSchema,
      },
      async ({ res, params }) => {
        responder(res, 200, await service.buscar(params.id));
      },
    );

  // Every refusal of a publication (401 aside) is stored before the error handler answers it.
  const guardarRecusa: ErrorRequestHandler = (error, req, res, next) => {
    if (req.method !== 'POST' || !isRecusa(error)) return next(error);
    void quemEnviou(req, res)
      .then((enviou) => registrarRecusa({ erro: error, corpo: req.rawBody, valor: req.body, remetente: enviou }))
      .finally(() => next(error));
  };
  /** A body refused before the handler ran leaves the application unknown: found by its client id. */
  async function quemEnviou(req: Request, res: Response): Promise<Remetente> {
    const enviou = remetente(req, res);
    if (enviou.clientId && !enviou.aplicativoId)
      enviou.aplicativoId = (await aplicativos.buscarPorClientId(enviou.clientId).catch(() => null))?.id ?? null;
    return enviou;
  }
  return router.catch(guardarRecusa);
}
