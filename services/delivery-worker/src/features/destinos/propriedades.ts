/**
 * The properties a job keeps when it moves between queues: its message id, content type and its
 * own headers (the claim, the consumer's attempt), without RabbitMQ's dead-lettering history (read
 * to detect cycles, it would drop a job that went round the same queues twice) or the publish tag
 * of its last mandatory publish.
 */
export function propriedadesDoTrabalho(
  properties: { messageId?: unknown; contentType?: unknown; headers?: Record<string, unknown> },
  semCabecalhos: readonly string[] = [],
) {
  const headers = Object.fromEntries(
    Object.entries(properties.headers ?? {}).filter(
      ([key]) => !/^x-(death|first-death-|last-death-|delivery-count)/.test(key) && !semCabecalhos.includes(key),
    ),
  );
  return {
    ...(typeof properties.messageId === 'string' ? { messageId: properties.messageId } : {}),
    contentType: typeof properties.contentType === 'string' ? properties.contentType : 'application/json',
    headers,
  };
}
