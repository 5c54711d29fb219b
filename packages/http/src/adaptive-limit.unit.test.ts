import { AdaptiveLimit } from './adaptive-limit';

describe('AdaptiveLimit (unit)', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 0;
  });

  it('When answers come within the target, then the limit stays at max and one more than max is refused', () => {
    const limit = new AdaptiveLimit({ max: 3, targetMs: 1000, now });
    expect([limit.acquire(), limit.acquire(), limit.acquire(), limit.acquire()]).toEqual([true, true, true, false]);
    limit.release(10);
    expect(limit.limit).toBe(3);
    expect(limit.acquire()).toBe(true);
  });

  it('When an answer is slower than the target, then the limit is cut by their ratio, by a fifth at most, at most once per target', () => {
    const limit = new AdaptiveLimit({ max: 100, targetMs: 1000, now });
    for (let i = 0; i < 3; i += 1) limit.acquire();
    limit.release(1100);
    expect(limit.limit).toBe(90);
    // A second slow answer within the same target period changes nothing: one queue, one cut.
    clock += 500;
    limit.release(5000);
    expect(limit.limit).toBe(90);
    clock += 600;
    limit.release(10_000);
    expect(limit.limit).toBe(72);
  });

  it('When answers are fast again, then the limit grows back by one per limit answers, up to max', () => {
    const limit = new AdaptiveLimit({ max: 20, targetMs: 1000, now });
    limit.acquire();
    limit.release(2000);
    expect(limit.limit).toBe(16);
    for (let i = 0; i < 16; i += 1) {
      limit.acquire();
      limit.release(5);
    }
    expect(limit.limit).toBe(16);
    limit.acquire();
    limit.release(5);
    expect(limit.limit).toBe(17);
    for (let i = 0; i < 1000; i += 1) {
      limit.acquire();
      limit.release(5);
    }
    expect(limit.limit).toBe(20);
  });

  it('When answers stay slow, then the limit never falls under min, and a failure (no time) teaches nothing', () => {
    const limit = new AdaptiveLimit({ max: 64, min: 4, targetMs: 100, now });
    for (let i = 0; i < 50; i += 1) {
      clock += 200;
      limit.acquire();
      limit.release(60_000);
    }
    expect(limit.limit).toBe(4);
    limit.acquire();
    limit.release(undefined);
    expect(limit.limit).toBe(4);
    expect(limit.underWay).toBe(0);
  });
});
