// atob exists in Node ≥16, browsers, Deno, Bun and edge runtimes, so no Buffer is needed.

/** Decodes standard or URL-safe base64, with or without padding; undefined when it is not base64. */
export function decodeBase64(text: string): Uint8Array | undefined {
  const normalised = text.trim().replaceAll('-', '+').replaceAll('_', '/');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(normalised)) return undefined;
  const unpadded = normalised.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return undefined;
  const padded = unpadded + '='.repeat((4 - (unpadded.length % 4)) % 4);
  let binary: string;
  try {
    binary = atob(padded);
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
