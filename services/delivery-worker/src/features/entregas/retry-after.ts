const DIA = '(Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const MES = '(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const HORA = '\\d{2}:\\d{2}:\\d{2}';
/** The three forms of HTTP-date a recipient reads (RFC 9110 §5.6.7): IMF-fixdate, RFC 850, asctime. */
const DATA_HTTP = [
  new RegExp(`^${DIA}, \\d{2} ${MES} \\d{4} ${HORA} GMT$`),
  new RegExp(`^(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \\d{2}-${MES}-\\d{2} ${HORA} GMT$`),
];
/** asctime has no zone: it is GMT too, said to Date.parse (which would read it as local time). */
const ASCTIME = new RegExp(`^${DIA} ${MES} ( \\d|\\d{2}) ${HORA} \\d{4}$`);

/**
 * Retry-After (RFC 9110 §10.2.3) in milliseconds: delay-seconds (digits only) or an HTTP-date, the
 * white space around the value aside. Anything else (`-1`, `1.5`, `1e3`, an ISO date, garbage,
 * empty) is undefined, as if absent, and the normal backoff applies: Date.parse alone read `-1` and
 * `1.5` as dates in 2001, already past, so no wait at all.
 */
export function lerRetryAfter(valor: string | undefined, agora = Date.now()): number | undefined {
  if (!valor) return undefined;
  const texto = valor.trim();
  if (/^\d+$/.test(texto)) return Number(texto) * 1000;
  let data: string | undefined;
  if (DATA_HTTP.some((forma) => forma.test(texto))) data = texto;
  else if (ASCTIME.test(texto)) data = `${texto} GMT`;
  if (data === undefined) return undefined;
  const quando = Date.parse(data);
  return Number.isNaN(quando) ? undefined : Math.max(0, quando - agora);
}
