/**
 * Where deliveries may go: the URL rules of a subscription's url_de_destino and the address checks
 * of architecture §5. hub-api checks at subscription time; the delivery worker checks the address it
 * actually connects to. One package, so both apply the same rules.
 */
export * from './safety';
export * from './url';
