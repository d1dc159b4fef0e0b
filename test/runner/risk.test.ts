import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimBroker } from '../../src/adapters/sim/broker.ts';
import { candle, instruments, MINUTE, T0 } from '../../src/adapters/sim/testkit.ts';
import type { Candle } from '../../src/domain/candle.ts';
import type { OrderIntent } from '../../src/domain/intents.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Engine } from '../../src/engine/engine.ts';
import { fromBatches } from '../../src/engine/merge.ts';
import { driveSources } from '../../src/engine/drive.testkit.ts';
import { Portfolio } from '../../src/engine/portfolio.ts';
import { VirtualClock } from '../../src/ports/clock.ts';
import { KillSwitch, killSwitchIntents } from '../../src/runner/order-path/kill-switch.ts';
import { RiskExecution, type RiskLimits, tradingDayStart } from '../../src/engine/risk.ts';
import { defineStrategy } from '../../src/strategy/api.ts';

let seq = 0;
const mkt = (units: number, extra: Record<string, unknown> = {}): OrderIntent => ({
  kind: 'order',
  id: `r-${++seq}`,
  request: { type: 'MARKET', instrument: 'EUR_USD', units: String(units), ...extra } as never,
});
const lim = (units: number, price: number): OrderIntent => ({
  kind: 'order',
  id: `r-${++seq}`,
  request: {
    type: 'LIMIT',
    instrument: 'EUR_USD',
    units: String(units),
    price: price.toFixed(5),
    timeInForce: 'GTC',
  } as never,
});

/** Real simulated broker + portfolio behind the risk layer, folded as the engine folds. */
function rig(limits: RiskLimits, hedging = false) {
  const inst = instruments();
  const sim = new SimBroker({
    instruments: inst,
    currency: 'USD',
    initialBalance: '100000',
    marginRate: '0.02',
    financing: false,
    hedging,
  });
  const portfolio = new Portfolio({
    currency: 'USD',
    instruments: inst,
    initialBalance: '100000',
    strict: false,
  });
  const clock = new VirtualClock(T0 - MINUTE);
  const risk = new RiskExecution({
    inner: sim,
    limits,
    portfolio,
    instruments: inst,
    clock,
    accountID: '101-001-1-1',
    hedging,
  });
  const txs: Transaction[] = [];
  risk.transactions$.subscribe((t) => {
    portfolio.apply(t);
    txs.push(t);
  });
  sim.start(T0 - MINUTE);
  const feed = (c: Candle): void => {
    clock.advance(c.at);
    sim.onEvent(c);
    portfolio.mark(c);
    risk.observe(c.at);
  };
  const rejects = () => txs.filter((t) => t.type.endsWith('_REJECT'));
  return { sim, portfolio, clock, risk, txs, feed, rejects };
}
const bar = (i: number, px = 1.1, spread = 0.0002) =>
  candle('EUR_USD', T0 + i * MINUTE, [px, px + 0.0003, px - 0.0003, px], spread);

describe('RiskExecution', () => {
  it('maxUnits: refuses the order that would exceed the limit, with a v20-shaped reject; exits pass', () => {
    const r = rig({ maxUnits: 1000 });
    r.feed(bar(0));
    r.risk.submit(mkt(600));
    r.feed(bar(1));
    const big = mkt(600);
    r.risk.submit(big);
    const [rej] = r.rejects();
    expect(rej).toMatchObject({
      type: 'MARKET_ORDER_REJECT',
      rejectReason: 'UNITS_LIMIT_EXCEEDED',
      clientExtensions: { id: big.id },
      instrument: 'EUR_USD',
      units: '600',
    });
    const msg = (rej as unknown as { errorMessage: string }).errorMessage;
    expect(msg, msg).toMatch(/1200 units.*limit is 1000/);
    r.risk.submit(mkt(400));
    r.risk.submit(mkt(-1000)); // an exit: always allowed
    r.feed(bar(2));
    expect(r.rejects()).toHaveLength(1);
    expect(r.portfolio.ledger.position('EUR_USD').long + r.portfolio.ledger.position('EUR_USD').short).toBe(
      0,
    );
  });

  it('property: no sequence of intents gets the worst-case position past maxUnits or open trades past maxOpenTrades', () => {
    let maxSeen = 0;
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({ k: fc.constant('m' as const), u: fc.integer({ min: -900, max: 900 }) }),
            fc.record({
              k: fc.constant('l' as const),
              u: fc.integer({ min: -900, max: 900 }),
              d: fc.integer({ min: -5, max: 5 }),
            }),
            fc.record({ k: fc.constant('bar' as const), u: fc.constant(0) }),
          ),
          { maxLength: 40 },
        ),
        (steps) => {
          const r = rig({ maxUnits: 2000, maxOpenTrades: 3 }, true);
          let i = 0;
          r.feed(bar(i++));
          for (const s of steps) {
            if (s.u === 0 && s.k !== 'bar') continue;
            if (s.k === 'bar') r.feed(bar(i++, 1.1 + ((i * 7) % 5) * 0.0002));
            else r.risk.submit(s.k === 'm' ? mkt(s.u) : lim(s.u, 1.1 + (s as { d: number }).d * 0.0002));
            const p = r.portfolio.ledger.position('EUR_USD');
            let buys = 0;
            let sells = 0;
            for (const o of r.portfolio.ledger.pendingOrders.values()) {
              const u = Number((o.created as { units?: string }).units ?? 0);
              if (u > 0) buys += u;
              else sells += u;
            }
            // Hedging account: each side is limited on its own (a sell opens a short trade).
            const worst = Math.max(p.long + buys, -(p.short + sells));
            maxSeen = Math.max(maxSeen, worst);
            expect(worst).toBeLessThanOrEqual(2000);
            expect(
              r.portfolio.ledger.trades.size + r.portfolio.ledger.pendingOrders.size,
            ).toBeLessThanOrEqual(3);
          }
        },
      ),
      { numRuns: 150 },
    );
    console.log(`[risk] maxUnits property: largest worst-case net position reached ${maxSeen} (limit 2000)`);
  });

  it('maxOpenTrades counts open trades and pending entries', () => {
    const r = rig({ maxOpenTrades: 2 }, true);
    r.feed(bar(0));
    r.risk.submit(mkt(100));
    r.risk.submit(lim(100, 1.09));
    r.risk.submit(mkt(-100));
    expect(r.rejects().map((t) => (t as { rejectReason?: string }).rejectReason)).toEqual([
      'OPEN_TRADES_ALLOWED_EXCEEDED',
    ]);
  });

  it('property: never more than maxOrdersPerMinute accepted within any sliding minute of engine time', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 1, maxLength: 60 }), (gaps) => {
        const r = rig({ maxOrdersPerMinute: 5 });
        r.feed(bar(0));
        const accepted: number[] = [];
        let t = r.clock.now();
        for (const g of gaps) {
          t += g;
          r.clock.advance(t);
          const before = r.rejects().length;
          r.risk.submit(lim(1, 1.0));
          if (r.rejects().length === before) accepted.push(t);
        }
        for (let i = 0; i < accepted.length; i++) {
          const inWindow = accepted.filter((a) => a > accepted[i]! - MINUTE && a <= accepted[i]!).length;
          expect(inWindow).toBeLessThanOrEqual(5);
        }
      }),
      { numRuns: 200 },
    );
    const r = rig({ maxOrdersPerMinute: 3 });
    r.feed(bar(0));
    for (let i = 0; i < 5; i++) r.risk.submit(lim(1, 1.0));
    expect(r.rejects().map((x) => (x as { rejectReason?: string }).rejectReason)).toEqual([
      'RISK_ORDER_RATE_EXCEEDED',
      'RISK_ORDER_RATE_EXCEEDED',
    ]);
    r.clock.advance(r.clock.now() + MINUTE);
    r.risk.submit(lim(1, 1.0));
    expect(r.rejects()).toHaveLength(2);
  });

  it('maxDailyLoss: entries refused once the trading day lost the limit; exits pass; a new 17:00 New York day resets', () => {
    const r = rig({ maxDailyLoss: 100 });
    r.feed(bar(0, 1.1));
    r.risk.submit(mkt(100_000));
    r.feed(bar(1, 1.1));
    r.feed(bar(2, 1.098)); // -0.002 * 100k = -200 (plus the spread)
    expect(r.risk.dailyLoss()).toBeGreaterThan(100);
    r.risk.submit(mkt(1000));
    expect(r.rejects().map((x) => (x as { rejectReason?: string }).rejectReason)).toEqual([
      'RISK_DAILY_LOSS_EXCEEDED',
    ]);
    r.risk.submit(mkt(-100_000));
    r.feed(bar(3, 1.098));
    expect(r.portfolio.ledger.trades.size).toBe(0);
    // 22:00 UTC on 2024-01-02 is 17:00 New York: a new trading day.
    const nextDay = candle('EUR_USD', Date.UTC(2024, 0, 2, 22, 0), [1.098, 1.0983, 1.0977, 1.098]);
    r.feed(nextDay);
    r.risk.submit(mkt(1000));
    expect(r.rejects()).toHaveLength(1);
    expect(tradingDayStart(Date.UTC(2024, 0, 2, 21, 59))).toBe(Date.UTC(2024, 0, 1, 22, 0));
    expect(tradingDayStart(Date.UTC(2024, 6, 2, 21, 0))).toBe(Date.UTC(2024, 6, 2, 21, 0)); // EDT: 17:00 = 21:00 UTC
  });

  it('maxDailyLoss: a breach only refuses opening parts: nothing is halted, closed or cancelled, and a loss that falls back under the limit within the day lets entries through again', () => {
    const r = rig({ maxDailyLoss: 100 });
    const reasons = (): (string | undefined)[] =>
      r.rejects().map((x) => (x as { rejectReason?: string }).rejectReason);
    r.feed(bar(0, 1.1));
    r.risk.submit(mkt(100_000));
    r.risk.submit(lim(1000, 1.05)); // a pending entry far below the market
    r.feed(bar(1, 1.1));
    r.feed(bar(2, 1.098));
    expect(r.risk.dailyLoss()).toBeGreaterThan(100);
    r.risk.submit(mkt(1000));
    r.feed(bar(3, 1.098));
    expect(reasons()).toEqual(['RISK_DAILY_LOSS_EXCEEDED']);
    // Not the kill switch: the position and the pending entry stay, nothing is halted.
    expect(r.risk.halted).toBe(false);
    expect([...r.portfolio.ledger.trades.values()].map((t) => t.unitsNum)).toEqual([100_000]);
    expect(r.portfolio.ledger.pendingOrders.size).toBe(1);
    // The position gains it back the same day: under the limit, an entry goes again.
    r.feed(bar(4, 1.1005));
    expect(r.risk.dailyLoss()).toBeLessThan(100);
    r.risk.submit(mkt(1000));
    r.feed(bar(5, 1.1005));
    expect(reasons()).toEqual(['RISK_DAILY_LOSS_EXCEEDED']);
    expect([...r.portfolio.ledger.trades.values()].map((t) => t.unitsNum).sort((a, b) => a - b)).toEqual([
      1000, 100_000,
    ]);
  });

  it('maxDailyLoss survives a restart: a resumed trading day counts from its journaled opening NAV; a day already over is ignored', () => {
    const first = rig({ maxDailyLoss: 100 });
    first.feed(bar(0, 1.1));
    expect(first.risk.observe(first.clock.now())).toBe(false); // same day: no new day to journal
    const day = first.risk.day!;
    expect(day).toEqual({ dayEnd: Date.UTC(2024, 0, 2, 22), startNav: 100_000 });
    // A restarted run whose account lost 150 since that day opened: it resumes the day.
    const second = rig({ maxDailyLoss: 100 });
    second.risk.restoreDay({ dayEnd: day.dayEnd, startNav: day.startNav + 150 });
    second.feed(bar(5, 1.1));
    expect(second.risk.dailyLoss()).toBeCloseTo(150, 6);
    second.risk.submit(mkt(1000));
    expect(second.rejects().map((x) => (x as { rejectReason?: string }).rejectReason)).toEqual([
      'RISK_DAILY_LOSS_EXCEEDED',
    ]);
    // Without the journaled day, the restart would have started the day afresh (the old gap this closes).
    const fresh = rig({ maxDailyLoss: 100 });
    fresh.feed(bar(5, 1.1));
    fresh.risk.submit(mkt(1000));
    expect(fresh.rejects()).toHaveLength(0);
    // A journaled day that ended before the restart is ignored: the next event opens today.
    const late = rig({ maxDailyLoss: 100 });
    late.risk.restoreDay({ dayEnd: Date.UTC(2024, 0, 1, 22), startNav: 200_000 });
    late.feed(bar(5, 1.1));
    expect(late.risk.dailyLoss()).toBe(0);
    expect(late.risk.day?.startNav).toBe(100_000);
  });

  it('a trading day ends at the next 17:00 New York, 23 or 25 hours later when daylight saving switches', () => {
    const r = rig({});
    // The day that opens Saturday 2024-03-09 17:00 EST ends Sunday 17:00 EDT: 23 hours.
    r.feed(candle('EUR_USD', Date.UTC(2024, 2, 9, 22, 30), [1.1, 1.1003, 1.0997, 1.1]));
    expect(r.risk.day!.dayEnd).toBe(Date.UTC(2024, 2, 10, 21));
    const autumn = rig({});
    autumn.feed(candle('EUR_USD', Date.UTC(2024, 10, 2, 21, 30), [1.1, 1.1003, 1.0997, 1.1]));
    expect(autumn.risk.day!.dayEnd).toBe(Date.UTC(2024, 10, 3, 22)); // 25 hours
  });

  it('maxSpreadPips: refuses an entry when the latest quote is wider than the limit', () => {
    const r = rig({ maxSpreadPips: 2 });
    r.feed(bar(0, 1.1, 0.0003));
    r.risk.submit(mkt(100));
    r.feed(bar(1, 1.1, 0.0002));
    r.risk.submit(mkt(100));
    expect(
      r.rejects().map((x) => (x as { rejectReason?: string; errorMessage?: string }).errorMessage),
    ).toEqual([expect.stringMatching(/spread 3\.0 pips; the limit is 2/)]);
  });

  it('the strategy sees a risk reject through onTransaction, and the next real transaction still folds', async () => {
    const inst = instruments();
    const sim = new SimBroker({
      instruments: inst,
      currency: 'USD',
      initialBalance: '100000',
      marginRate: '0.02',
      financing: false,
    });
    const portfolio = new Portfolio({
      currency: 'USD',
      instruments: inst,
      initialBalance: '100000',
      strict: false,
    });
    const clock = new VirtualClock();
    const risk = new RiskExecution({
      inner: sim,
      limits: { maxUnits: 1500 },
      portfolio,
      instruments: inst,
      clock,
      accountID: 'a',
    });
    const seen: string[] = [];
    const s = defineStrategy({
      params: {},
      subscribe: { candles: ['EUR_USD:M1'] },
      onCandle: (ctx) => [ctx.market('EUR_USD', '1000')],
      onTransaction(ctx) {
        const t = ctx.transaction!;
        seen.push(
          `${t.type}${(t as { rejectReason?: string }).rejectReason ? `:${(t as { rejectReason?: string }).rejectReason}` : ''}`,
        );
      },
    });
    const engine = new Engine({
      strategy: s,
      name: 't',
      params: {},
      execution: risk,
      portfolio,
      instruments: inst,
      clock,
      log: { debug() {}, info() {}, warn() {}, error() {} },
      marginRate: 0.02,
    });
    const bars = [bar(0), bar(1), bar(2)];
    await driveSources(engine, [fromBatches([bars])], (e) => {
      if (e.at === bars[0]!.at) sim.start(e.at - MINUTE);
      sim.onEvent(e);
      risk.observe(e.at);
    });
    expect(seen.filter((x) => x.includes('REJECT'))).toEqual([
      'MARKET_ORDER_REJECT:UNITS_LIMIT_EXCEEDED',
      'MARKET_ORDER_REJECT:UNITS_LIMIT_EXCEEDED',
    ]);
    expect(seen.filter((x) => x === 'ORDER_FILL')).toHaveLength(1);
    expect(portfolio.ledger.position('EUR_USD').long).toBe(1000);
  });
});

describe('kill switch', () => {
  it('fires on a file, once; its intents cancel pending entries and flatten; the halted layer refuses entries', async () => {
    const r = rig({});
    r.feed(bar(0));
    r.risk.submit(mkt(1000));
    r.risk.submit(lim(500, 1.05));
    r.feed(bar(1));
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-kill-'));
    const file = join(dir, 'STOP');
    const why: string[] = [];
    const ks = new KillSwitch({ file, signal: false, pollMs: 20, onKill: (w) => why.push(w) });
    await new Promise((res) => setTimeout(res, 60));
    expect(why).toEqual([]);
    writeFileSync(file, '');
    for (let i = 0; i < 250 && why.length === 0; i++) await new Promise((res) => setTimeout(res, 20));
    expect(why).toEqual([`file ${file}`]);
    expect(ks.fired && existsSync(file)).toBe(true);
    r.risk.halt();
    const intents = killSwitchIntents(r.portfolio, true, 'kill');
    expect(intents.map((i) => i.kind)).toEqual(['cancel', 'closePosition']);
    for (const i of intents) r.risk.submit(i);
    r.risk.submit(mkt(10));
    r.feed(bar(2));
    expect(r.portfolio.ledger.trades.size).toBe(0);
    expect(r.portfolio.ledger.pendingOrders.size).toBe(0);
    expect(r.rejects().map((x) => (x as { rejectReason?: string }).rejectReason)).toEqual([
      'RISK_KILL_SWITCH_ENGAGED',
    ]);
  });

  it('fires on SIGUSR2', async () => {
    const why: string[] = [];
    const ks = new KillSwitch({ onKill: (w) => why.push(w) });
    process.kill(process.pid, 'SIGUSR2');
    for (let i = 0; i < 250 && why.length === 0; i++) await new Promise((res) => setTimeout(res, 20));
    expect(why).toEqual(['SIGUSR2']);
    ks.close();
  });
});
