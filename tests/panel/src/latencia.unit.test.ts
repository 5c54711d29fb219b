import { formatarLatencia } from '../../../services/panel/src/latencia';

describe("the summary's latencies on screen", () => {
  it('When a latency is shown, then it is in the unit that suits it, in pt-BR, and an hour without deliveries shows a dash', () => {
    expect(
      [0, 3.6, 85, 999.4, 1_000, 1_449, 59_999, 60_000, 192_000, 3_600_000, 9_000_000, null].map(formatarLatencia),
    ).toEqual(['0 ms', '3,6 ms', '85 ms', '999 ms', '1 s', '1,4 s', '60 s', '1 min', '3,2 min', '1 h', '2,5 h', '—']);
  });
});
