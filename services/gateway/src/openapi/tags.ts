/**
 * What each tag of the merged document is about, for readers of /docs and of generated clients.
 * The services tag their routes by name only; the gateway, which publishes the one document, says
 * what the groups are. A tag missing here is published without a description, which the
 * documentation lint refuses (tests/platform/src/platform.test.ts).
 */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  Auth: 'Accesses to the panel (acessos): who may sign in, with which perfil, active or not. Served by the access service.',
  'Perfil de acesso': 'Access profiles: named sets of permissions per area, given to accesses.',
  Colaborador: 'Collaborators synchronised from the identity service, each with the access profile it was given.',
  Função: 'Job functions of the identity service (masters only); renaming one announces its collaborators again.',
  Aplicativo: 'Applications: the publishers and subscribers, known by the client_id of their tokens.',
  'Tipo de evento': 'Event types: what applications may publish, each owned by one application, with its retention.',
  'Versão de esquema': 'Versions of an event type’s JSON Schema; a publication names the version its dados follow.',
  Esquema: 'The raw JSON Schema of an event type version, for publishers to validate against.',
  Assinatura: 'Subscriptions: an application receiving an event type’s version at a URL, with its attempts.',
  Eventos: 'The publishers’ API: an application publishes an event as itself and reads back what it published.',
  Evento: 'Events as the panel sees them: every event received, its dados, delivery counters and deliveries.',
  'Evento recusado': 'Publications the hub refused: why, what was received and who sent it.',
  Entregas:
    'The subscribers’ API: an application reads the deliveries of its own subscriptions, with their attempts, and resends one.',
  Assinaturas: 'The subscribers’ API: an application reads its own subscriptions and replays a time range to one.',
  Entrega: 'Deliveries: one per event and subscription, with their state, attempts and resending.',
  Tentativa: 'Attempts of deliveries: when, how long, the answer of the destination.',
  Destino: 'Destination origins of subscriptions: concurrency and rate limits, pause and resume, the circuit breaker.',
  'Solicitação de reprocessamento': 'Reprocessing requests: deliveries taken out of the error queue for a new cycle.',
  Reprodução:
    'Replays: the stored events of a time range delivered again to one subscription, in batches, with their progress.',
  Fila: 'The delivery queues (work, delay steps, error): their counts, messages of the error queue, reconciliation.',
  'Chave de assinatura': 'The public Ed25519 keys (JWKS) that verify the signatures of deliveries.',
};
