/**
 * The identity stand-in: user and application tokens, its JWKS, collaborator synchronisation. Run as
 * a process by services/identity-dev and in-process by the tests (`startTestIdentity` of @hub/testing),
 * so neither depends on the other.
 */
export * from './app';
export * from './keys';
