import { z } from 'zod';
import { rfc3339 } from '../eventos/eventos.schemas';

/** A link lives at most this long, and this long unless told (docs/contract.md, the subscribers' portal). */
export const VIDA_MAXIMA_MS = 24 * 60 * 60 * 1000;
export const VIDA_PADRAO_MS = 60 * 60 * 1000;

export const linkCriar = z
  .object({
    expira_em: rfc3339
      .nullish()
      .describe(
        'when the link stops opening the portal: RFC 3339, after now and at most 24 h ahead; 1 h ahead unless given',
      ),
  })
  .strict();

export const linkDoPortalSchema = z.object({
  url: z.string().describe("the portal's page with the token in the fragment: {gateway}/portal/#token={token}"),
  token: z
    .string()
    .describe(
      'opens the subscriber routes of the application, sent as Authorization: Bearer {token}; shown once, only its SHA-256 is kept',
    ),
  expira_em: z.string(),
});
export type LinkDoPortal = z.infer<typeof linkDoPortalSchema>;
