import { CLOUDEVENTS_CONTENT_TYPE, corpoCloudEvents, corpoDaEntrega } from '@hub/contracts';
import { generateKey, signersOf } from '@hub/signing';
import { iniciarTrecho } from '@hub/tracing';
import { contado, mensagem, recursosFalsos, reivindicada, resultado, trabalho } from './etapas.test-support';
import { EtapaDeEnvio } from './envio';

const CORPO = corpoDaEntrega(
  {
    evento_id: '0192f0c8-0000-7000-8000-0000000000e1',
    tipo: 'pedido.criado',
    versao_do_esquema: 2,
    entidade_id: 'pedido-1',
    ocorrido_em: new Date('2026-12-02T09:59:00Z'),
    recebido_em: new Date('2026-12-02T09:59:01Z'),
    aplicativo_publicador_id: '0192f0c8-0000-7000-8000-0000000000a1',
    teste: false,
  },
  '0192f0c8-0000-7000-8000-0000000000b1',
  '{"n":1}',
  null,
);

function etapa(responde = resultado()) {
  const { recursos } = recursosFalsos();
  const signers = signersOf({ keys: [generateKey()] });
  const keys = { signersNow: jest.fn(() => signers), signers: jest.fn(async () => signers) };
  const remetente = { enviar: jest.fn(async () => responde), cortar: jest.fn() };
  return { e: new EtapaDeEnvio({ recursos, keys, remetente }), recursos, remetente };
}

describe('sign and send', () => {
  test('When the subscription is standard-webhooks, then the job body is signed and POSTed as it is', async () => {
    const { e, remetente, recursos } = etapa();
    const t = trabalho({ corpo: CORPO });
    const { cabecalhos } = await e.enviar(t, 'https://recebe.example/agora', reivindicada(t), iniciarTrecho('teste'));
    const [url, corpo, assinatura, , tipo] = remetente.enviar.mock.calls[0] as unknown as [
      string,
      Buffer,
      object,
      unknown,
      string,
    ];
    expect(url).toBe('https://recebe.example/agora');
    expect(corpo.toString()).toBe(CORPO);
    expect(tipo).toBe('application/json');
    expect(assinatura).toBe(cabecalhos);
    expect(cabecalhos['webhook-id']).toBe(t.entrega_id);
    expect(cabecalhos['webhook-signature']).toMatch(/^v1a,/);
    expect((await recursos.metricas.emVoo.get()).values[0]!.value).toBe(0);
  });

  test('When the subscription is cloudevents, then the CloudEvents body is sent with its content type and schema URL', async () => {
    const { e, remetente, recursos } = etapa();
    const t = trabalho({ corpo: CORPO });
    await e.enviar(t, t.url_de_destino, reivindicada(t, { formato: 'cloudevents' }), iniciarTrecho('teste'));
    const [, corpo, , , tipo] = remetente.enviar.mock.calls[0] as unknown as [string, Buffer, object, unknown, string];
    expect(tipo).toBe(CLOUDEVENTS_CONTENT_TYPE);
    expect(corpo.toString()).toBe(corpoCloudEvents(CORPO, recursos.config.urlDoEsquema));
    expect(JSON.parse(corpo.toString()).dataschema).toBe('https://gateway.test/esquema/pedido.criado/2');
  });

  test('When an attempt is noted, then it counts by result, by destination and in the duration histogram', async () => {
    const { e, recursos } = etapa();
    e.anotar(trabalho(), 'https://recebe.example', resultado({ statusHttp: 500 }));
    e.anotar(trabalho(), 'https://recebe.example', resultado());
    const m = recursos.metricas;
    expect(await contado(m.tentativas, { resultado: 'falha' })).toBe(1);
    expect(await contado(m.tentativas, { resultado: 'sucesso' })).toBe(1);
    expect(await contado(m.tentativasPorDestino, { origem: 'https://recebe.example', resultado: 'falha' })).toBe(1);
  });

  test('When the attempt runs in its span, then it is counted as tentado and its value comes back', async () => {
    const { e, recursos } = etapa();
    const t = trabalho();
    const valor = await e.noTrecho(t, mensagem(t), reivindicada(t), 'https://recebe.example', async () => 'feito');
    expect(valor).toBe('feito');
    expect(await contado(recursos.metricas.trabalhos, { desfecho: 'tentado' })).toBe(1);
  });
});
