-- What exists from the first start: the platform's own application `identidade` (the identity
-- service publishes through it) and its event type `colaborador.atualizado`, version 1.

insert into aplicativo (id, nome, client_id, ativo, criado_em, atualizado_em)
values ('01900000-0000-7000-8000-000000000001', 'Identidade', 'identidade', true, now(), now());

insert into tipo_de_evento (id, nome, descricao, aplicativo_id, ativo, retencao_em_dias, criado_em, atualizado_em)
values (
  '01900000-0000-7000-8000-000000000002',
  'colaborador.atualizado',
  'A collaborator of the identity service changed (also announced again when its function is renamed).',
  '01900000-0000-7000-8000-000000000001',
  true,
  30,
  now(),
  now()
);

insert into versao_de_esquema (id, tipo_de_evento_id, versao, esquema, descricao, ativa, criado_em, atualizado_em)
values (
  '01900000-0000-7000-8000-000000000003',
  '01900000-0000-7000-8000-000000000002',
  1,
  '{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "colaborador.atualizado v1",
  "description": "A collaborator as the identity service describes it.",
  "type": "object",
  "required": ["termoauth_id", "email", "nome", "ativo", "funcao"],
  "properties": {
    "termoauth_id": { "type": "string", "minLength": 1, "description": "id of the collaborator in the identity service" },
    "email": { "type": "string", "minLength": 3, "maxLength": 320 },
    "nome": { "type": "string" },
    "ativo": { "type": "boolean" },
    "funcao": {
      "description": "the collaborator''s job function, or null when it has none",
      "type": ["object", "null"],
      "required": ["id", "nome"],
      "properties": {
        "id": { "type": "string", "minLength": 1 },
        "nome": { "type": "string", "minLength": 1, "maxLength": 120 }
      },
      "additionalProperties": false
    }
  },
  "additionalProperties": false
}',
  'The collaborator: termoauth_id, email, nome, ativo and funcao (id, nome) or null.',
  true,
  now(),
  now()
);
