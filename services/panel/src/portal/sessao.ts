import { createApiClient } from '@hub/client';

const CHAVE = 'hub.portal.token';

/**
 * The portal's token: taken from the address's fragment (`/portal/#token=…`, so it never reaches a
 * server's log), kept in sessionStorage (this tab only), and removed from the address bar at once,
 * so it is neither bookmarked nor shared with a screenshot of the address.
 */
export function tokenDoPortal(): string | null {
  const achado = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (achado?.[1]) {
    sessionStorage.setItem(CHAVE, decodeURIComponent(achado[1]));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem(CHAVE);
}

let aoExpirar = () => {};
/** Called on any 401: the link expired or was revoked. */
export const quandoExpirar = (fn: () => void) => {
  aoExpirar = fn;
};

/** The subscriber routes, typed by @hub/client, with the portal's token; never retried. */
export const portal = createApiClient({
  baseUrl: location.origin,
  token: () => sessionStorage.getItem(CHAVE) ?? '',
  onUnauthorized: () => {
    sessionStorage.removeItem(CHAVE);
    aoExpirar();
  },
});
