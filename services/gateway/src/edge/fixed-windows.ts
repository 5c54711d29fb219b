/**
 * Fixed windows per key, in memory: each gateway instance counts its own clients. A window starts at
 * a key's first request; ended windows are swept once per window length, so memory follows the
 * clients of the last minute and no timer is left running.
 */
export function createFixedWindows(windowMs: number, now: () => number = Date.now) {
  const windows = new Map<string, { count: number; resetAt: number }>();
  let nextSweep = now() + windowMs;
  return {
    /** Counts one request of `key`: how many it made in its window, and ms until that window ends. */
    hit(key: string): { count: number; resetInMs: number } {
      const at = now();
      if (at >= nextSweep) {
        for (const [k, w] of windows) if (w.resetAt <= at) windows.delete(k);
        nextSweep = at + windowMs;
      }
      let window = windows.get(key);
      if (!window || window.resetAt <= at) {
        window = { count: 0, resetAt: at + windowMs };
        windows.set(key, window);
      }
      window.count++;
      return { count: window.count, resetInMs: window.resetAt - at };
    },
    size: () => windows.size,
  };
}
