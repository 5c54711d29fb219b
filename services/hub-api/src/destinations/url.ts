/** Longest url_de_destino accepted. */
export const MAX_URL = 2048;

/** The URL of a subscription, or why it is not acceptable (http(s) only, no credentials). */
export function parseDestinationUrl(text: string): { url: URL } | { problema: string } {
  if (text.length > MAX_URL) return { problema: `must be at most ${MAX_URL} characters` };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problema: 'must be an absolute http or https URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problema: 'must use http or https' };
  if (url.username || url.password) return { problema: 'must not carry credentials (user:password@)' };
  if (!url.hostname) return { problema: 'must name a host' };
  return { url };
}
