import { createHash, randomBytes } from 'node:crypto';

/**
 * A portal token: this prefix and 32 random bytes in base64url (docs/decisions/subscribers-portal.md).
 * Not a JWT, so no verifier of the identity service's tokens accepts it (POST /eventos, the panel's
 * routes); the prefix tells the subscriber routes' guard to look it up instead.
 */
export const PREFIXO_DO_PORTAL = 'portal_';

export const novoTokenDoPortal = () => PREFIXO_DO_PORTAL + randomBytes(32).toString('base64url');

export const ehTokenDoPortal = (token: string) => token.startsWith(PREFIXO_DO_PORTAL);

/** What is stored of a token: its SHA-256, hex (the token has 256 random bits: no salt needed). */
export const digestoDoToken = (token: string) => createHash('sha256').update(token).digest('hex');
