import type { WebhookHeaders } from '@hub/signing';

// What the tests of the worker's HTTP client (remetente*.unit.test.ts) share.

/** Signature headers of a POST (their values are not checked by the client). */
export const ASSINATURA: WebhookHeaders = {
  'webhook-id': 'msg_01',
  'webhook-timestamp': '1764230400',
  'webhook-signature': 'v1a,YXNzaW5hdHVyYQ==',
  'webhook-key-id': 'chave-1',
};
/** The body of a POST. */
export const CORPO = Buffer.from('{"id":"evt_1","dados":{"n":1}}');

/** A self-signed certificate for `localhost` (P-256, valid until 2126), for these tests only. */
export const CHAVE_LOCALHOST = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQguyHkgZGJdIdRcX+V
MqthVrji9ECv01wNeHbmc9g9ASGhRANCAAQOTQRtnXbbeTfLXz2GDWDkktNhF1vU
Znm9W4gZQZ4pkDOwNnFWf7Ky6qDCzq4BOQ4eLiRrR27pwSAsfb+RgWHd
-----END PRIVATE KEY-----
`;
export const CERTIFICADO_LOCALHOST = `-----BEGIN CERTIFICATE-----
MIIBlTCCATugAwIBAgIUKa/L+4uPthK7pTMtCxDJMN0RXJYwCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTEyNzA3MjUwN1oYDzIxMjYxMTAz
MDcyNTA3WjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQOTQRtnXbbeTfLXz2GDWDkktNhF1vUZnm9W4gZQZ4pkDOwNnFWf7Ky
6qDCzq4BOQ4eLiRrR27pwSAsfb+RgWHdo2kwZzAdBgNVHQ4EFgQUr3IW18tm/W2i
UWFfAhoywk7JDu8wHwYDVR0jBBgwFoAUr3IW18tm/W2iUWFfAhoywk7JDu8wDwYD
VR0TAQH/BAUwAwEB/zAUBgNVHREEDTALgglsb2NhbGhvc3QwCgYIKoZIzj0EAwID
SAAwRQIgVYdIBSlObbylLdNQz1O8RhX41LJ9b+ml13NVs0gvjvkCIQCqCz1xUmXk
DAryjvKqDn5yqrLFQrYQse+h2efWef57VQ==
-----END CERTIFICATE-----
`;
