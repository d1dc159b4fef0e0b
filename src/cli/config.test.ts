import { describe, expect, it } from 'vitest';
import type { Candle } from '../domain/candle.ts';
import { withSpread } from './backtest.ts';
import { ConfigError, loadConfig } from './config.ts';

const flags = (o: Record<string, Record<string, unknown>>) => loadConfig(undefined, o as never);

describe('config', () => {
  it('loads config/default.json', () => {
    const c = loadConfig();
    expect(c.account).toEqual({ currency: 'USD', initialBalance: '100000', marginRate: '0.02', hedging: false, fifo: false });
    expect(c.fill.path).toBe('adaptive');
  });

  it.each([
    [{ account: { currency: 'usd' } }, /account\.currency must be a three-letter currency code/],
    [{ account: { marginRate: '1.5' } }, /account\.marginRate must be a decimal string in \(0, 1\]/],
    [{ data: { spread: 'wide' } }, /data\.spread must be one of "native", "mid", "fixed", "hourly"/],
    [{ data: { spread: 'hourly' } }, /data\.spreadPipsByHour is required with data\.spread "hourly"/],
    [{ data: { spreadPipsByHour: [1, 2] } }, /data\.spreadPipsByHour must be 24 numbers/],
    [{ run: { granularity: 'H7' } }, /run\.granularity must be a v20 granularity/],
    [{ run: { from: '2025-01-01', to: '2024-01-01' } }, /run\.to \(2024-01-01\) must be after run\.from/],
    [{ fill: { pth: 'worst' } }, /fill\.pth is not a known field \(did you mean "fill\.path"\?\)/],
    [{ fill: { path: 'random' } }, /fill\.path must be one of "adaptive", "worst", "exact"/],
    [{ account: { fifo: true, hedging: true } }, /account\.fifo cannot be true together with account\.hedging/],
  ])('%j is refused with a message naming the field', (o, message) => {
    expect(() => flags(o)).toThrow(ConfigError);
    expect(() => flags(o)).toThrow(message);
  });
});

describe('spread models', () => {
  const c: Candle = { kind: 'candle', instrument: 'EUR_USD', granularity: 'H1', time: Date.UTC(2024, 0, 2, 21), at: Date.UTC(2024, 0, 2, 22), bo: 1.1, bh: 1.2, bl: 1.0, bc: 1.15, ao: 1.1002, ah: 1.2002, al: 1.0002, ac: 1.1502, volume: 1, complete: true };
  const run = async (data: Parameters<typeof withSpread>[1]): Promise<Candle> => {
    for await (const b of withSpread((async function* () { yield [c]; })(), data, 0.0001, (x) => Math.round(x * 1e5) / 1e5)) return b[0]!;
    throw new Error('no candle');
  };

  it('mid: both sides at mid (the classic zero-spread configuration)', async () => {
    const m = await run({ catalog: '', spread: 'mid', spreadPips: 0 });
    expect([m.bo, m.ao, m.bc, m.ac]).toEqual([1.1001, 1.1001, 1.1501, 1.1501]);
  });

  it('hourly: the spread of the candle\'s UTC hour around mid', async () => {
    const byHour = Array.from({ length: 24 }, (_, h) => (h === 21 ? 3 : 1));
    const m = await run({ catalog: '', spread: 'hourly', spreadPips: 0, spreadPipsByHour: byHour });
    expect(m.ao - m.bo).toBeCloseTo(0.0003, 10);
    expect((m.ao + m.bo) / 2).toBeCloseTo(1.1001, 10);
  });
});

describe('fill models in the config (fill.slippage, fill.latency, costs.commission)', () => {
  it("defaults to v20's own fills: no slippage, no latency, commission per million", () => {
    const c = loadConfig();
    expect(c.fill.slippage).toBe('none');
    expect(c.fill.latency).toBe('none');
    expect(c.costs.commission).toBe('per-million');
  });

  it('takes the named models', () => {
    const c = flags({ fill: { slippage: 'spread:0.5', latency: 'fixed:250' }, costs: { commission: 'oanda-core' } });
    expect([c.fill.slippage, c.fill.latency, c.costs.commission]).toEqual(['spread:0.5', 'fixed:250', 'oanda-core']);
  });

  it.each([
    [{ fill: { slippage: 'lots' } }, /fill\.slippage is wrong: slippage must be none, fixed:<pips> \(e\.g\. fixed:0\.5\) or spread:<fraction>/],
    [{ fill: { latency: 'fixed:-1' } }, /fill\.latency is wrong: latency must be none, fixed:<ms>/],
    [{ fill: { latency: 'file:/nonexistent/delays.txt' } }, /fill\.latency is wrong: latency file \/nonexistent\/delays\.txt: cannot be read \(ENOENT\)/],
    [{ fill: { slippage: 2 } }, /fill\.slippage must be a string like "none"/],
    [{ costs: { commission: 'cheap' } }, /costs\.commission must be one of "per-million", "oanda-core"/],
    [{ account: { currency: 'NOK' }, costs: { commission: 'oanda-core' } }, /costs\.commission "oanda-core" has no schedule for an account in NOK/],
  ])('%j is refused with a message naming the field', (o, message) => {
    expect(() => flags(o)).toThrow(ConfigError);
    expect(() => flags(o)).toThrow(message);
  });
});
