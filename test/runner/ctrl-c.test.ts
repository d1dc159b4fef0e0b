// Issue 24, item 4: the Ctrl-C rule on its own clock (the end-to-end test with real signals is
// ctrl-c.e2e.test.ts): first = stop, second = warning, third within the window = exit, a press
// after the window warns again.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CtrlC } from '../../src/runner/session/session.ts';

function rig(windowMs: number) {
  let now = 0;
  const calls: string[] = [];
  const c = new CtrlC({
    windowMs: () => windowMs,
    now: () => now,
    first: () => calls.push('stop'),
    warn: (l) => calls.push(`warn: ${l}`),
    exit: () => calls.push('exit'),
  });
  return { press: (at: number) => ((now = at), c.press()), calls };
}

describe('CtrlC', () => {
  it('stop, warn, exit; the warning is the one operators read', () => {
    const r = rig(3000);
    r.press(0);
    r.press(100);
    r.press(2999);
    expect(r.calls).toEqual([
      'stop',
      'warn: Ctrl-C again within 3 s exits WITHOUT flattening: positions stay open',
      'exit',
    ]);
  });

  it('a third press after the window warns again; the next within the window of that warning exits', () => {
    const r = rig(3000);
    r.press(0);
    r.press(100);
    r.press(3100);
    r.press(4000);
    expect(r.calls.map((c) => c.split(':')[0])).toEqual(['stop', 'warn', 'warn', 'exit']);
  });

  it('property: exit comes only from a press within the window of the previous warning, and never before two presses', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 6000 }), { minLength: 1, maxLength: 12 }), (gaps) => {
        const r = rig(3000);
        let t = 0;
        let warnedAt = Number.NEGATIVE_INFINITY;
        for (const [i, g] of gaps.entries()) {
          t += g;
          const before = r.calls.length;
          r.press(t);
          if (r.calls[before]?.startsWith('warn')) warnedAt = t;
          if (r.calls[before] === 'exit') {
            expect(i).toBeGreaterThanOrEqual(2);
            expect(t - warnedAt).toBeLessThan(3000);
            return;
          }
        }
        expect(r.calls.filter((c) => c === 'stop')).toHaveLength(1);
      }),
      { numRuns: 300 },
    );
  });
});
