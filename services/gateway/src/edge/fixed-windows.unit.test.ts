import { createFixedWindows } from './fixed-windows';

describe('fixed windows (unit)', () => {
  let clock = 0;
  const now = () => clock;
  beforeEach(() => {
    clock = 1_000_000;
  });

  it('When a key makes requests within its window, then they add up, apart from other keys', () => {
    const windows = createFixedWindows(60_000, now);
    expect(windows.hit('a')).toEqual({ count: 1, resetInMs: 60_000 });
    clock += 15_000;
    expect(windows.hit('a')).toEqual({ count: 2, resetInMs: 45_000 });
    expect(windows.hit('b')).toEqual({ count: 1, resetInMs: 60_000 });
  });

  it('When its window has ended, then a key starts again from one', () => {
    const windows = createFixedWindows(60_000, now);
    windows.hit('a');
    windows.hit('a');
    clock += 60_000;
    expect(windows.hit('a')).toEqual({ count: 1, resetInMs: 60_000 });
  });

  it('When keys stop calling, then their ended windows are swept, so memory follows recent clients', () => {
    const windows = createFixedWindows(60_000, now);
    for (let i = 0; i < 1000; i++) windows.hit(`ip:${i}`);
    expect(windows.size()).toBe(1000);
    clock += 61_000;
    windows.hit('ip:recent');
    expect(windows.size()).toBe(1);
  });
});
