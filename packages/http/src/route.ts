import { type ErrorRequestHandler, type Request, type RequestHandler, type Response, Router } from 'express';
import { z } from 'zod';
import { guardsAfterAdmission } from './admission';
import { AppError, badRequest, notFound, unprocessable } from './errors';
import { zodErros } from './validation';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The security schemes of the OpenAPI documents: a panel user's token, an application's token. */
export type SecurityScheme = 'bearer' | 'aplicativo';

export interface RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: Method;
  /** Express syntax: /auth/:id */
  path: string;
  /**
   * The operation's name in the OpenAPI document (what generated clients call their methods); by
   * default made from the method and path (see `operationIdOf`). Set it where that reads badly.
   */
  operationId?: string;
  summary: string;
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * Parses the body in place of `body`, which then only describes it (the OpenAPI document): a
   * schema that leaves out a check the frame has already made of every body (bodyGuard), where that
   * check costs, with the same output and the same refusals.
   */
  bodyParser?: z.ZodType;
  /**
   * Request headers the route reads, for the OpenAPI document only (names as sent, e.g.
   * `Idempotency-Key`; optional unless required by the schema): the handler parses them itself.
   */
  headers?: z.ZodObject;
  /** Schema of the success body, for the OpenAPI document. */
  response?: z.ZodType;
  /** Success status; 204 when the handler returns nothing. */
  status?: number;
  /**
   * Admission control (see `admission`): run for this route before anything reads the body, after
   * its guards (see `admissionChain`), ahead of the body parser.
   */
  admission?: RequestHandler;
  /** Guards run before parsing (authentication, permissions). */
  guards?: RequestHandler[];
  /** What the route asks of the caller, for the documentation: "monitoramento.ler", "master". */
  permission?: string;
  /**
   * The OpenAPI security schemes whose tokens the route takes, any one of them (`SECURITY_SCHEMES`):
   * `bearer` (a user of the panel) unless told, `aplicativo` for an application's token.
   */
  security?: readonly SecurityScheme[];
  /** false for public routes. */
  authenticated?: boolean;
  /** Extra refusals worth documenting, e.g. { 409: 'name taken' }. */
  refusals?: Record<number, string>;
  /**
   * Served on node:http ahead of express when the request is plain (fast-path.ts): a hot route
   * (POST /eventos). Its guards, admission, handler and error handlers then get node's request and
   * response with only `req.body`, `req.rawBody`, what the guards set and `res.locals` added: no
   * `req.get`, no `res.status`/`res.json`. The handler answers itself (returns nothing).
   */
  fast?: boolean;
}

/** A route served on node:http ahead of express (`fast` in its spec): what runs once its body is read. */
export interface FastRoute {
  spec: RouteSpec;
  /** The route's own chain, as express runs it: its guards (after admission) and the handler. */
  chain: RequestHandler[];
  /** The router's error handlers (`catch`), which see the route's errors before the problem handler. */
  errorHandlers: readonly ErrorRequestHandler[];
}

export interface RouteInput<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  req: Request;
  res: Response;
}

type Output<T extends z.ZodType | undefined> = T extends z.ZodType ? z.output<T> : undefined;

/**
 * A router whose routes parse their input with zod and describe themselves for OpenAPI.
 * Path params that fail to parse are a 404 (no such resource), query params a 400, bodies a 422.
 */
export class ApiRouter {
  readonly router = Router();
  readonly specs: RouteSpec[] = [];
  /** The routes with `fast` in their spec, for createHttpApp's fast path. */
  readonly fastRoutes: FastRoute[] = [];
  private readonly errorHandlers: ErrorRequestHandler[] = [];

  route<
    P extends z.ZodType | undefined = undefined,
    Q extends z.ZodType | undefined = undefined,
    B extends z.ZodType | undefined = undefined,
  >(
    spec: RouteSpec & { params?: P; query?: Q; body?: B },
    handler: (input: RouteInput<Output<P>, Output<Q>, Output<B>>) => Promise<unknown> | unknown,
  ): this {
    this.specs.push(spec as RouteSpec);
    const parse: RequestHandler = async (req, res) => {
      const input = {
        params: spec.params ? parseParams(spec.params, req.params) : undefined,
        query: spec.query ? parseQuery(spec.query, req.query) : undefined,
        body: spec.body ? parseBody(spec.bodyParser ?? spec.body, req) : undefined,
        req,
        res,
      } as RouteInput<Output<P>, Output<Q>, Output<B>>;
      const result = await handler(input);
      if (res.headersSent) return;
      if (result === undefined) {
        res.status(spec.status && spec.status !== 200 ? spec.status : 204).end();
      } else {
        res.status(spec.status ?? 200).json(result);
      }
    };
    const guards = spec.guards ?? [];
    const chain = [...(spec.admission ? guardsAfterAdmission(guards) : guards), parse];
    this.router[spec.method](spec.path, ...chain);
    if (spec.fast) this.fastRoutes.push({ spec: spec as RouteSpec, chain, errorHandlers: this.errorHandlers });
    return this;
  }

  /**
   * An error handler of this router's routes, run before the problem handler, on the express path
   * and on the fast path alike (it must then use node's request and response only, as `fast` says).
   */
  catch(handler: ErrorRequestHandler): this {
    this.router.use(handler);
    this.errorHandlers.push(handler);
    return this;
  }
}

function parseParams(schema: z.ZodType, params: unknown) {
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw notFound('resource');
  return parsed.data;
}

function parseQuery(schema: z.ZodType, query: unknown) {
  const parsed = schema.safeParse(query);
  if (!parsed.success) {
    const problems = zodErros(parsed.error).map((e) => `${e.caminho.slice(1) || 'query'}: ${e.mensagem}`);
    throw badRequest('consulta_invalida', `invalid query parameters: ${problems.join('; ')}`);
  }
  return parsed.data;
}

function parseBody(schema: z.ZodType, req: Request) {
  if (req.body === undefined) {
    throw new AppError(
      415,
      'tipo_de_conteudo_invalido',
      'the body must be JSON sent with Content-Type: application/json',
    );
  }
  const parsed = schema.safeParse(req.body);
  if (!parsed.success)
    throw unprocessable('dados_invalidos', 'the body breaks the rules of this route', zodErros(parsed.error));
  return parsed.data;
}

/** A uuid in its canonical lower-case form, whatever case the client wrote it in. */
export const uuidText = z.uuid().transform((id) => id.toLowerCase());

/** A uuid path id; anything else is simply not found. */
export const idParams = z.object({ id: uuidText });
