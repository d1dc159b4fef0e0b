import { describe, expect, it } from 'vitest';
import { HANDLER_NAMES, type Params, type Strategy } from '../../strategy/api.ts';
import { liveStrategy } from './live-strategy.ts';

describe('liveStrategy (the strategy as a live run calls it)', () => {
  it('calls no handler once halted (onSpread and onCot too), none but the price ones while warming, and tells every transaction', () => {
    const calls: string[] = [];
    const base: Record<string, unknown> = { name: 's', params: {}, subscribe: {} };
    for (const k of HANDLER_NAMES)
      base[k] = () => {
        calls.push(k);
        return undefined;
      };
    let halted = false;
    let warming = true;
    const told: unknown[] = [];
    const s = liveStrategy(base as unknown as Strategy<Params, unknown>, undefined, {
      warming: () => warming,
      halted: () => halted,
      transaction: (tx) => told.push(tx),
    });
    const ctx = { transaction: { id: '7' } } as never;
    const callAll = (): void => {
      for (const k of HANDLER_NAMES) (s[k] as (c: never, st: unknown) => unknown)(ctx, undefined);
    };
    callAll();
    // Warming: warm-up candles and onStart reach nothing; the rest is live.
    expect(calls).toEqual(HANDLER_NAMES.filter((k) => k !== 'onCandle' && k !== 'onStart'));
    calls.length = 0;
    warming = false;
    callAll();
    expect(calls).toEqual([...HANDLER_NAMES]);
    calls.length = 0;
    halted = true;
    callAll();
    expect(calls).toEqual([]);
    expect(told).toEqual([{ id: '7' }, { id: '7' }, { id: '7' }]);
  });
});
