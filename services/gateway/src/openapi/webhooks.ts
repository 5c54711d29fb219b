/**
 * The wire format of a delivery (architecture §5), as OpenAPI 3.1 `webhooks`: what the hub POSTs to a
 * subscription's URL. No service serves it (it is a request the hub makes), so the gateway adds it
 * to the merged document itself.
 */

const VERIFY = `Verify before trusting the body, with the raw bytes as received (before any JSON parsing):

\`\`\`ts
import { createVerifier } from '@hub/webhook-verifier';

const verifier = createVerifier({
  jwksUrl: 'https://<hub>/.well-known/jwks.json',
  expectedSubscription: '<the id of your subscription>',
});
app.post('/webhooks', express.raw({ type: 'application/json' }), async (req, res) => {
  try {
    const evento = await verifier.verify(req.headers, req.body);
    res.sendStatus(204); // handle \`evento\` once per webhook-id
  } catch {
    res.sendStatus(401);
  }
});
\`\`\`

The signed bytes are \`{webhook-id}.{webhook-timestamp}.{raw body}\`. A delivery is genuine when any
\`v1a\` signature verifies with an Ed25519 key of the hub's JWKS (\`GET /.well-known/jwks.json\`; the
kid in \`webhook-key-id\` first). Keys come only from the JWKS, never from the request. Refuse
timestamps more than 300 s off. The same \`webhook-id\` comes again on a retry: handle it once.

One key set signs every subscriber's deliveries, so the body names its recipient: refuse a delivery
whose \`assinatura_id\` is not your subscription's (\`expectedSubscription\` does it), or a delivery
captured at another subscriber replays into yours within the 300 s. Test events published from the
panel (\`POST /evento\`) are signed the same way and carry \`"teste": true\`; the application's own
never carry \`teste\`.

Answer 2xx within the timeout to conclude the delivery. Any other answer, a timeout or a redirect is
a failed attempt, retried with exponential backoff until the subscription's \`maximo_de_tentativas\`,
then the delivery goes to the error queue. 429 and 503 with \`Retry-After\` are honoured (bounded);
410 Gone switches the subscription off.`;

const example = {
  id: '0193a5b2-7c4e-7d1a-9f3b-2a1c5e8d9f01',
  tipo: 'pedido.criado',
  versao_do_esquema: 1,
  entidade_id: 'PED-2026-000123',
  ocorrido_em: '2026-11-21T21:00:00.000Z',
  recebido_em: '2026-11-21T21:00:00.125Z',
  aplicativo_publicador_id: '0193a5b2-0000-7000-8000-00000000a001',
  assinatura_id: '0193a5b2-0000-7000-8000-00000000b001',
  dados: { valor_total: 199.9, moeda: 'BRL' },
};

const header = (name: string, description: string, schema: Record<string, unknown>, example: string) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
  example,
});

export const ENTREGA_SCHEMA = {
  type: 'object',
  description:
    'The body of a delivery: the event as the hub accepted it, and the subscription it is for. Fields in this order; new optional fields may be added.',
  required: [
    'id',
    'tipo',
    'versao_do_esquema',
    'entidade_id',
    'ocorrido_em',
    'recebido_em',
    'aplicativo_publicador_id',
    'assinatura_id',
    'dados',
  ],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'the event id (UUIDv7)' },
    tipo: { type: 'string', description: 'the event type, e.g. pedido.criado' },
    versao_do_esquema: { type: 'integer', minimum: 1, description: 'the version of the type’s schema `dados` follows' },
    entidade_id: { type: 'string', description: 'the id, in the publisher’s system, of the entity the event is about' },
    ocorrido_em: { type: 'string', format: 'date-time', description: 'when it happened, as the publisher said' },
    recebido_em: { type: 'string', format: 'date-time', description: 'when the hub accepted it' },
    aplicativo_publicador_id: { type: 'string', format: 'uuid', description: 'the application that published it' },
    assinatura_id: {
      type: 'string',
      format: 'uuid',
      description:
        'the subscription this delivery is for, signed with the rest: refuse a delivery naming another (a replay of one captured at another subscriber)',
    },
    teste: {
      type: 'boolean',
      const: true,
      description:
        'present, and true, only on a test event published from the panel (POST /evento); absent on the application’s own events',
    },
    dados: {
      type: 'object',
      additionalProperties: true,
      description: 'the payload, valid against the type’s schema version',
    },
  },
  example,
};

export const DELIVERY_WEBHOOKS = {
  entrega: {
    post: {
      summary: 'A delivery of an event to a subscription (Standard Webhooks, asymmetric v1a)',
      description: VERIFY,
      operationId: 'entrega',
      security: [],
      parameters: [
        header(
          'webhook-id',
          'the delivery id, the same on every retry of it; drop repeats with it',
          { type: 'string', format: 'uuid' },
          '0193a5b2-7c4f-7a00-8000-0000000000e1',
        ),
        header(
          'webhook-timestamp',
          'unix seconds when this attempt was signed',
          { type: 'string', pattern: '^[0-9]+$' },
          '1795302000',
        ),
        header(
          'webhook-signature',
          '`v1a,<base64 Ed25519 signature of "{webhook-id}.{webhook-timestamp}.{body}">`, one per active signing key, space separated (two during a key rotation)',
          { type: 'string', pattern: '^v1a,[A-Za-z0-9+/]+={0,2}( v1a,[A-Za-z0-9+/]+={0,2})*$' },
          'v1a,PNR8s8cCa7vbGp0UmMSaldGcZSvGhpD8aApuRUGV8+xzcTmb6JvQIkB1MnaBhraWvr5d7+Zf9pkOlbhwrxD1Ag==',
        ),
        header(
          'webhook-key-id',
          'the JWKS kid of each signature, in the same order, space separated',
          { type: 'string' },
          'hub-2026-11',
        ),
      ],
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Entrega' }, example } },
      },
      responses: {
        '2XX': { description: 'received: the delivery is concluded' },
        '410': { description: 'gone: the subscription is switched off and the delivery goes to the error queue' },
        '429': { description: 'slow down: retried after Retry-After (bounded)' },
        '503': { description: 'unavailable: retried after Retry-After (bounded)' },
        default: { description: 'any other answer is a failed attempt, retried with backoff' },
      },
    },
  },
};
