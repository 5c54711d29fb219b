import { lerRetryAfter } from './remetente';

// The Retry-After of a 429 or 503 (RFC 9110 §10.2.3): delay-seconds or an HTTP-date. What the
// worker does with it (at least that wait, within the next step) is atrasos.ts, tested by falhas.test.ts.

const AGORA = Date.parse('2026-03-01T12:00:00Z');

describe('lerRetryAfter', () => {
  it.each([
    ['0', 0],
    ['120', 120_000],
    [' 7 ', 7_000],
    ['86400', 86_400_000],
  ])('When Retry-After is %j seconds, then the wait is %d ms', (valor, ms) => {
    expect(lerRetryAfter(valor, AGORA)).toBe(ms);
  });

  it('When Retry-After is an HTTP date in the future, then the wait is the time until then', () => {
    expect(lerRetryAfter('Sun, 01 Mar 2026 12:01:30 GMT', AGORA)).toBe(90_000);
  });

  it.each([
    ['IMF-fixdate', 'Sun, 01 Mar 2026 12:01:30 GMT'],
    ['RFC 850', 'Sunday, 01-Mar-26 12:01:30 GMT'],
    ['asctime (GMT, whatever the local zone)', 'Sun Mar  1 12:01:30 2026'],
  ])('When Retry-After is an HTTP date in the %s form, then it is read', (_forma, valor) => {
    expect(lerRetryAfter(valor, AGORA)).toBe(90_000);
  });

  it('When Retry-After is an HTTP date already past, then the wait is 0, never negative', () => {
    expect(lerRetryAfter('Sun, 01 Mar 2026 11:00:00 GMT', AGORA)).toBe(0);
  });

  // Neither delay-seconds nor an HTTP-date: Date.parse alone read '-1' and '1.5' as dates in 2001.
  it.each([
    undefined,
    '',
    '   ',
    'soon',
    '1e3',
    '-1',
    '1.5',
    '+5',
    '0x10',
    '5 s',
    '2026-03-01T12:01:30Z',
    'Mon, 99 Foo 2026',
    'sun, 01 mar 2026 12:01:30 gmt',
    'Sun, 01 Mar 2026 12:01:30 +0000',
  ])('When Retry-After is %j, then there is no wait to honour (undefined)', (valor) => {
    expect(lerRetryAfter(valor, AGORA)).toBeUndefined();
  });

  it('When no time is given, then the date is read against the clock', () => {
    jest.useFakeTimers({ now: AGORA });
    try {
      expect(lerRetryAfter('Sun, 01 Mar 2026 12:01:30 GMT')).toBe(90_000);
    } finally {
      jest.useRealTimers();
    }
  });
});
