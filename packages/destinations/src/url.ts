/** Longest url_de_destino accepted (as stored, in its normalised form). */
export const MAX_URL = 2048;

/**
 * Control characters (C0, DEL, C1) anywhere, even where the URL parser would silently strip them
 * (leading and trailing ones, tab and newlines inside): a URL that carries one was not typed by a
 * person, and CR LF in a URL is how headers get injected.
 */
const CONTROLE = /\p{Cc}/u;
/**
 * `http://` or `https://` followed by a host. The URL parser forgives `http:///x`, `http:x` and
 * `http:\\x` (it reads the host `x`): such a text names no host, so it is refused, not guessed.
 */
const COM_HOST = /^https?:\/\/[^/\\?#]/i;

/**
 * The URL of a subscription in its parsed, normalised form (WHATWG `href`: lower-case scheme and
 * host, default port dropped, dot segments resolved, IDN in punycode), or why it is not acceptable:
 * http(s) only, a host, a port 1–65535, no credentials, no control characters.
 */
export function parseDestinationUrl(text: string): { url: URL } | { problema: string } {
  if (CONTROLE.test(text)) return { problema: 'must not contain control characters (CR, LF, tab, NUL…)' };
  const trimmed = text.trim();
  if (trimmed.length > MAX_URL) return { problema: `must be at most ${MAX_URL} characters` };
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return { problema: 'must be an absolute http or https URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problema: 'must use http or https' };
  if (!COM_HOST.test(trimmed)) return { problema: 'must be an absolute http or https URL with a host (scheme://host)' };
  if (url.username || url.password) return { problema: 'must not carry credentials (user:password@)' };
  if (!url.hostname) return { problema: 'must name a host' };
  // The parser accepts port 0 (and drops a default port, leaving ''); nothing listens on 0.
  if (url.port === '0') return { problema: 'must have a port from 1 to 65535' };
  if (url.href.length > MAX_URL) return { problema: `must be at most ${MAX_URL} characters once normalised` };
  return { url };
}

/**
 * The origin of a URL, WHATWG's `origin`: scheme://host[:port], scheme and host in lower case, the
 * default port (80, 443) dropped, an IPv6 host in brackets. What destinations, the worker's
 * per-destination limits and its connection pools are keyed by; for a stored, normalised
 * url_de_destino, the same text as `origem_da_url` of the hub's database. Throws on a text that is
 * not a URL.
 */
export function origemDaUrl(url: string | URL): string {
  return (typeof url === 'string' ? new URL(url) : url).origin;
}
