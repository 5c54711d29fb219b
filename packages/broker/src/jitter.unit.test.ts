import { jitteredWait, retryStep } from './jitter';

describe('Retry waits (pure rules)', () => {
  it('When the random draw spans [0, 1), then the wait spans [lowest × step, step] and never leaves it', () => {
    expect(jitteredWait(1_000, 0.5, () => 0)).toBe(500);
    expect(jitteredWait(1_000, 0.5, () => 0.999_999)).toBe(1_000);
    expect(jitteredWait(4_000, 0.75, () => 0)).toBe(3_000);
    expect(jitteredWait(4_000, 0.75, () => 0.5)).toBe(3_500);
    for (let i = 0; i < 1_000; i += 1) {
      const wait = jitteredWait(10_000, 0.75);
      expect(wait).toBeGreaterThanOrEqual(7_500);
      expect(wait).toBeLessThanOrEqual(10_000);
    }
  });

  it('When the step is tiny or the draw is out of range, then the wait is at least 1 ms and still within the step', () => {
    expect(jitteredWait(1, 0.5, () => 0)).toBe(1);
    expect(jitteredWait(0, 0.5, () => 0.3)).toBe(1);
    expect(jitteredWait(1_000, 0.5, () => 7)).toBe(1_000);
    expect(jitteredWait(1_000, 0.5, () => -1)).toBe(500);
  });

  it('When the floor is outside [0, 1], then the call is refused', () => {
    expect(() => jitteredWait(1_000, 1.5)).toThrow('not within [0, 1]');
    expect(() => jitteredWait(1_000, -0.1)).toThrow('not within [0, 1]');
    expect(() => jitteredWait(1_000, Number.NaN)).toThrow('not within [0, 1]');
  });

  it('When attempts go past the last step, then the last step repeats; before the first, the first', () => {
    const steps = [1_000, 2_000, 4_000];
    expect([-3, 0, 1, 2, 3, 40].map((i) => retryStep(steps, i))).toEqual([1_000, 1_000, 2_000, 4_000, 4_000, 4_000]);
    expect(() => retryStep([], 0)).toThrow('at least one step');
  });
});
