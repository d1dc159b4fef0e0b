import { defineStrategy } from 'fxflow';

/**
 * SMA crossover that stands aside around high-impact economic releases: from `minutesBefore` a
 * scheduled release of impact >= `impact` in either currency of the instrument until
 * `minutesAfter` it, the position is closed and no new one is opened. It knows of a release only
 * once the calendar has published it (in backtests: when it was recorded; see docs/labs.md).
 *
 *   fxflow record --currencies EUR,USD --labs calendar      (builds the calendar history)
 *   fxflow backtest strategies/calendar-stand-aside.ts
 */
export default defineStrategy({
  name: 'calendar-stand-aside',
  description: 'SMA crossover, flat around high-impact calendar releases',
  params: {
    instrument: 'EUR_USD',
    granularity: 'M15',
    fast: 10,
    slow: 30,
    units: 10_000,
    impact: 3,
    minutesBefore: 30,
    minutesAfter: 30,
  },
  subscribe: (p) => ({ candles: [`${p.instrument}:${p.granularity}`], calendar: p.instrument.split('_') }),
  init: () => ({ signal: 0, releases: [] as number[], blocked: 0 }),
  onCalendar(ctx, s) {
    const c = ctx.calendar!;
    if (c.impact < ctx.params.impact) return;
    const at = c.releaseAt ?? c.at;
    if (s.releases.includes(at) || at + ctx.params.minutesAfter * 60_000 < ctx.now) return;
    // Keep the upcoming releases only (bounded).
    const releases = [...s.releases.filter((t) => t + ctx.params.minutesAfter * 60_000 >= ctx.now), at].sort(
      (a, b) => a - b,
    );
    return { state: { ...s, releases } };
  },
  onCandle(ctx, s) {
    const { fast, slow, units, instrument, minutesBefore, minutesAfter } = ctx.params;
    const quiet = s.releases.some(
      (t) => ctx.now >= t - minutesBefore * 60_000 && ctx.now <= t + minutesAfter * 60_000,
    );
    const net = ctx.position(instrument).net;
    if (quiet) {
      return {
        state: { ...s, signal: 0, blocked: s.blocked + 1 },
        intents: net !== 0 ? [ctx.closePosition(instrument)] : [],
      };
    }
    const f = ctx.sma(fast);
    const sl = ctx.sma(slow);
    if (f === undefined || sl === undefined) return;
    const signal = f > sl ? 1 : f < sl ? -1 : s.signal;
    if (signal === s.signal && net !== 0) return;
    const delta = signal * units - net;
    return { state: { ...s, signal }, intents: delta === 0 ? [] : [ctx.market(instrument, delta)] };
  },
});
