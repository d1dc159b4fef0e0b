import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RateLimiter, WINDOW_MS, backoffDelay } from './rate-limit.ts';

/** Drives a limiter with a manual clock through attempts at the given gaps; returns grant times. */
function drive(perSecond: number, burst: number, gaps: number[]): number[] {
  let now = 1_000_000;
  const lim = new RateLimiter({ perSecond, burst, now: () => now });
  const grants: number[] = [];
  for (const g of gaps) {
    now += g;
    if (lim.tryAcquire() === 0) grants.push(now);
  }
  return grants;
}

describe('RateLimiter', () => {
  it('never grants more than perSecond in any 1000 ms window, nor more than burst + rate·T in any window T', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(
          fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 1500 })),
          { minLength: 1, maxLength: 400 },
        ),
        (perSecond, burst, gaps) => {
          const grants = drive(perSecond, burst, gaps);
          for (let i = 0; i < grants.length; i++) {
            let inWindow = 0;
            for (let j = i; j < grants.length && grants[j]! < grants[i]! + WINDOW_MS; j++) inWindow++;
            expect(inWindow).toBeLessThanOrEqual(perSecond);
            for (let j = i; j < grants.length; j++) {
              const span = grants[j]! - grants[i]!;
              // j - i + 1 grants within a closed span of `span` ms
              expect(j - i + 1).toBeLessThanOrEqual(burst + (perSecond * span) / WINDOW_MS + 1e-9);
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('the wait it returns is enough: trying again after it succeeds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 200 }), { maxLength: 200 }),
        (perSecond, burst, gaps) => {
          let now = 0;
          const lim = new RateLimiter({ perSecond, burst, now: () => now });
          for (const g of gaps) {
            now += g;
            const w = lim.tryAcquire();
            if (w > 0) {
              now += w;
              expect(lim.tryAcquire()).toBe(0);
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('lets a full burst through at once, then paces at the rate (OANDA: 100 at once, then 100 per second)', () => {
    let now = 0;
    const lim = new RateLimiter({ perSecond: 100, burst: 100, now: () => now });
    let granted = 0;
    for (let i = 0; i < 150; i++) if (lim.tryAcquire() === 0) granted++;
    expect(granted).toBe(100);
    // the window is full until 1000 ms after the first grant
    now = 999;
    expect(lim.tryAcquire()).toBeGreaterThan(0);
    now = 1000;
    expect(lim.tryAcquire()).toBe(0);
  });

  it('acquire() waits its turn and honours an abort', async () => {
    const lim = new RateLimiter({ perSecond: 1, burst: 1 });
    await lim.acquire();
    const ac = new AbortController();
    const p = lim.acquire(ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });

  it('rejects nonsense budgets with a message naming the field', () => {
    expect(() => new RateLimiter({ perSecond: 0, burst: 1 })).toThrow(/rate\.perSecond/);
    expect(() => new RateLimiter({ perSecond: 5, burst: 1.5 })).toThrow(/rate\.burst/);
  });
});

describe('backoffDelay', () => {
  it('stays within [base/2, min(cap, base·2^attempt)] and grows with the attempt', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1000, max: 60_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, base, cap, r) => {
          const d = backoffDelay(attempt, base, cap, () => r);
          expect(d).toBeGreaterThanOrEqual(base / 2);
          expect(d).toBeLessThanOrEqual(Math.max(base / 2, Math.min(cap, base * 2 ** attempt)));
        },
      ),
    );
    expect(backoffDelay(5, 100, 60_000, () => 0.999)).toBeGreaterThan(
      backoffDelay(1, 100, 60_000, () => 0.999),
    );
  });
});
