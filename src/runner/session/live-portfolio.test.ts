import { describe, expect, it } from 'vitest';
import type { Params, Strategy } from '../../strategy/api.ts';
import { isolated } from './live-portfolio.ts';

describe('isolated (a portfolio member stopped alone when it throws)', () => {
  it('passes every handler through until one throws; tells the first throw once; calls nothing of it after', () => {
    const calls: string[] = [];
    const base = {
      name: 's',
      params: {},
      subscribe: { ticks: ['EUR_USD'] },
      init: () => 0,
      onTick: (_ctx: never, n: number) => {
        calls.push(`tick ${n}`);
        if (n === 2) throw new Error('boom');
        return { state: n + 1 };
      },
      onTransaction: () => {
        calls.push('transaction');
        return undefined;
      },
      onStop: () => {
        calls.push('stop');
        return undefined;
      },
    } as unknown as Strategy<Params, unknown>;
    const failures: unknown[] = [];
    const s = isolated(base, (e) => failures.push(e));
    const ctx = {} as never;
    expect(s.onTick!(ctx, 1)).toEqual({ state: 2 });
    expect(s.onTransaction!(ctx, 2)).toBeUndefined();
    expect(s.onTick!(ctx, 2)).toBeUndefined();
    expect(s.onTick!(ctx, 3)).toBeUndefined();
    expect(s.onTransaction!(ctx, 3)).toBeUndefined();
    expect(s.onStop!(ctx, 3)).toBeUndefined();
    expect(calls).toEqual(['tick 1', 'transaction', 'tick 2']);
    expect(failures.map((e) => (e as Error).message)).toEqual(['boom']);
    // What the strategy does not have stays absent (the engine skips it), its other fields kept.
    expect(s.onCandle).toBeUndefined();
    expect(s.init).toBe(base.init);
    expect(s.subscribe).toBe(base.subscribe);
  });
});
