import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.ts';
import { runDrift } from '../../src/cli/run.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import {
  breachedTolerance,
  type DriftBreach,
  DriftGuard,
  type DriftTolerances,
  formatDrift,
  parseMaxDrift,
} from '../../src/runner/recording/drift.ts';

// The drift guard's tolerance checks (src/runner/recording/drift.ts), fed transactions as v20 writes them.

const T0 = Date.UTC(2024, 0, 2, 10, 0);
const iso = (ms: number): string => new Date(ms).toISOString().replace('Z', '000000Z');
const PIP = 0.0001;

/** One side's transactions for an intent: its order, then a fill (price, P/L) or a reject/cancel. */
class Side {
  #id = 0;
  constructor(
    readonly guard: DriftGuard,
    readonly live: boolean,
  ) {}
  #feed(t: object): void {
    if (this.live) this.guard.live(t as Transaction);
    else this.guard.sim(t as Transaction);
  }
  order(cid: string, at: number): string {
    const id = String(++this.#id);
    this.#feed({
      type: 'MARKET_ORDER',
      id,
      time: iso(at),
      instrument: 'EUR_USD',
      units: '1000',
      clientExtensions: { id: cid },
    });
    return id;
  }
  fill(cid: string, at: number, price: number, pl = 0): void {
    const orderID = this.order(cid, at);
    this.#feed({
      type: 'ORDER_FILL',
      id: String(++this.#id),
      orderID,
      time: iso(at),
      instrument: 'EUR_USD',
      units: '1000',
      price: price.toFixed(5),
      pl: pl.toFixed(4),
    });
  }
  reject(cid: string, at: number, synthetic = false): void {
    this.#feed({
      type: 'MARKET_ORDER_REJECT',
      id: synthetic ? `${this.#id}.1` : String(++this.#id),
      time: iso(at),
      instrument: 'EUR_USD',
      units: '1000',
      rejectReason: 'INSUFFICIENT_MARGIN',
      clientExtensions: { id: cid },
    });
  }
}

function rigGuard(spec: string): { guard: DriftGuard; live: Side; sim: Side; breaches: DriftBreach[] } {
  const breaches: DriftBreach[] = [];
  const guard = new DriftGuard(
    parseMaxDrift([spec]),
    () => PIP,
    (b) => breaches.push(b),
  );
  return { guard, live: new Side(guard, true), sim: new Side(guard, false), breaches };
}

describe('--max-drift: the flag and the config section', () => {
  it('reads a bare number as price in pips, key=value lists, repeated flags, and the config file under the flag', () => {
    expect(parseMaxDrift(['1'])).toEqual({ price: 1, windowMs: 3_600_000, waitMs: 10_000 });
    expect(parseMaxDrift(['price=0.5,fills=0', 'pl=25', 'window=15m', 'wait=30s'])).toEqual({
      price: 0.5,
      fills: 0,
      pl: 25,
      windowMs: 900_000,
      waitMs: 30_000,
    });
    expect(parseMaxDrift(['price=2'], { fills: 1, price: 1, windowMs: 60_000, waitMs: 10_000 })).toEqual({
      price: 2,
      fills: 1,
      windowMs: 60_000,
      waitMs: 10_000,
    });
    expect(formatDrift(parseMaxDrift(['price=1,fills=0,pl=20,window=1d']))).toBe(
      'price=1,fills=0,pl=20,window=1d,wait=10s',
    );
  });

  it('a bad value is one line naming the key and what is expected', () => {
    const bad: [string, RegExp][] = [
      ['price=-1', /^--max-drift: price must be a number of pips >= 0, e\.g\. price=1 \(got "-1"\)$/],
      ['fills=1.5', /^--max-drift: fills must be a whole number of fills >= 0/],
      ['pl=lots', /^--max-drift: pl must be an amount of the account currency >= 0/],
      ['price=1,window=5', /^--max-drift: window must be a duration like 30s, 15m, 1h or 1d \(got "5"\)$/],
      ['slip=1', /^--max-drift: "slip" is not a drift tolerance; known: price, fills, pl, window, wait/],
      ['lots', /^--max-drift: "lots" is neither key=value nor a number of pips/],
      [
        'window=1h',
        /^--max-drift: no tolerance given; say at least one of price=<pips>, fills=<count>, pl=<amount>/,
      ],
    ];
    for (const [spec, re] of bad) expect(() => parseMaxDrift([spec]), spec).toThrow(re);
  });

  it('the config section `drift` is checked, naming the file and field; `fxflow run` takes it with --shadow only', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-drift-'));
    const good = join(dir, 'good.json');
    writeFileSync(good, JSON.stringify({ drift: { price: 1.5, fills: 0, window: '30m' } }));
    expect(loadConfig(good).drift).toEqual({ price: 1.5, fills: 0, windowMs: 1_800_000, waitMs: 10_000 });
    expect(loadConfig().drift).toBeUndefined();
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ drift: { price: 'one' } }));
    expect(() => loadConfig(bad)).toThrow(
      `${bad}: drift.price must be a number of pips >= 0, e.g. price=1 (got "one")`,
    );
    const typo = join(dir, 'typo.json');
    writeFileSync(typo, JSON.stringify({ drift: { prices: 1 } }));
    expect(() => loadConfig(typo)).toThrow(
      /drift\.prices is not a known field \(did you mean "drift\.price"\?\)/,
    );
    // The flag over the file, key by key.
    expect(runDrift({ shadow: true, config: good, maxDrift: ['price=3'] })).toEqual({
      price: 3,
      fills: 0,
      windowMs: 1_800_000,
      waitMs: 10_000,
    });
    expect(runDrift({ shadow: true, config: good })).toEqual({
      price: 1.5,
      fills: 0,
      windowMs: 1_800_000,
      waitMs: 10_000,
    });
    expect(runDrift({ shadow: true })).toBeUndefined();
    expect(() => runDrift({ maxDrift: ['1'] })).toThrow(
      /^--max-drift compares the account with its shadow simulator: use it with --shadow\. Nothing was started\.$/,
    );
    expect(() => runDrift({ shadow: true, maxDrift: ['price=x'] })).toThrow(
      /^--max-drift: price must be .*Nothing was started\.$/,
    );
  });
});

const tolerancesArb: fc.Arbitrary<DriftTolerances> = fc
  .record({
    price: fc.option(fc.double({ min: 0, max: 50, noNaN: true }), { nil: undefined }),
    fills: fc.option(fc.nat(20), { nil: undefined }),
    pl: fc.option(fc.double({ min: 0, max: 1e6, noNaN: true }), { nil: undefined }),
    windowMs: fc.integer({ min: 1000, max: 86_400_000 }),
    waitMs: fc.integer({ min: 1000, max: 60_000 }),
  })
  .map(
    (t) =>
      Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined)) as unknown as DriftTolerances,
  );

describe('the tolerance checks', () => {
  it('property: measures at or below every tolerance never breach; one past it breaches exactly that tolerance', () => {
    fc.assert(
      fc.property(
        tolerancesArb,
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (t, a, b, c) => {
          const below = {
            pricePips: (t.price ?? 1e9) * a,
            missed: Math.floor((t.fills ?? 1e9) * b),
            plGap: (t.pl ?? 1e9) * c,
          };
          expect(breachedTolerance(t, below)).toBeUndefined();
          if (t.price !== undefined)
            expect(breachedTolerance(t, { pricePips: t.price + 0.01 + a })).toBe('price');
          if (t.fills !== undefined) expect(breachedTolerance(t, { missed: t.fills + 1 })).toBe('fills');
          if (t.pl !== undefined) expect(breachedTolerance(t, { plGap: t.pl + 0.01 + c })).toBe('pl');
        },
      ),
    );
  });

  it('property: a run whose every pair of fills is within the price tolerance, with every fill on both sides, never halts, whatever the interleaving', () => {
    const intent = fc.record({
      move: fc.double({ min: -1, max: 1, noNaN: true }),
      liveFirst: fc.boolean(),
      gapMs: fc.integer({ min: 0, max: 9000 }),
      pl: fc.double({ min: -50, max: 50, noNaN: true }),
    });
    fc.assert(
      fc.property(
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        fc.array(intent, { minLength: 1, maxLength: 40 }),
        (tol, intents) => {
          const { guard, live, sim, breaches } = rigGuard(`price=${tol},fills=0,pl=0.5,window=1h`);
          let at = T0;
          for (const [k, x] of intents.entries()) {
            const cid = `s-${k}`;
            const price = 1.1 + k * PIP;
            guard.expect(cid);
            // The two fills within the tolerance (on the instrument's tenth-of-a-pip grid, up to the tolerance itself), and the same P/L on both sides.
            const other = price + (Math.trunc(x.move * tol * 10) / 10) * PIP;
            guard.priced(at);
            if (x.liveFirst) live.fill(cid, at, price, x.pl);
            else sim.fill(cid, at, other, x.pl);
            at += x.gapMs;
            guard.priced(at);
            if (x.liveFirst) sim.fill(cid, at, other, x.pl);
            else live.fill(cid, at, price, x.pl);
            at += 1000;
          }
          expect(breaches).toEqual([]);
          expect(guard.compared).toBe(intents.length);
          expect(guard.missed).toBe(0);
          expect(guard.pricePips).toBeLessThanOrEqual(tol + 1e-9);
        },
      ),
    );
  });

  it('a fill past the price tolerance halts once, naming the tolerance and the fill', () => {
    const { guard, live, sim, breaches } = rigGuard('price=1');
    for (const cid of ['a-1', 'a-2', 'a-3']) guard.expect(cid);
    live.fill('a-1', T0, 1.1);
    sim.fill('a-1', T0 + 1000, 1.10008); // 0.8 pips
    live.fill('a-2', T0 + 2000, 1.10033);
    sim.fill('a-2', T0 + 3000, 1.10003); // 3 pips
    live.fill('a-3', T0 + 4000, 1.1005);
    sim.fill('a-3', T0 + 5000, 1.1); // 5 pips: a second breach is not reported again
    expect(breaches).toHaveLength(1);
    expect(breaches[0]).toMatchObject({ tolerance: 'price', limit: 1, fills: ['a-2'] });
    expect(breaches[0]!.why).toBe(
      'drift guard: price 3.0 past --max-drift price=1: fill of a-2 EUR_USD: live 1.10033 sim 1.10003 (3.0 pips)',
    );
    expect(guard.drifted.map((d) => d.clientID)).toEqual(['a-2', 'a-3']);
    expect(guard.pricePips).toBeCloseTo(5, 6);
  });

  it("fills on one side only: against a reject at once, against nothing once `wait` of price time has passed; the runner's own risk refusals are left out", () => {
    const { guard, live, sim, breaches } = rigGuard('fills=1,wait=5s');
    for (const cid of ['m-1', 'm-2', 'm-3']) guard.expect(cid);
    live.fill('m-1', T0, 1.1);
    sim.reject('m-1', T0 + 1000);
    expect(guard.missed).toBe(1);
    expect(breaches).toEqual([]);
    // Refused by the runner's risk gate (a synthetic ID): the simulator's fill is not a miss.
    live.reject('m-2', T0 + 2000, true);
    sim.fill('m-2', T0 + 3000, 1.1);
    guard.priced(T0 + 60_000);
    expect(guard.missed).toBe(1);
    sim.fill('m-3', T0 + 61_000, 1.1);
    guard.priced(T0 + 65_000);
    expect(breaches).toEqual([]);
    guard.priced(T0 + 66_001);
    expect(guard.missed).toBe(2);
    expect(breaches).toHaveLength(1);
    expect(breaches[0]!.tolerance).toBe('fills');
    expect(breaches[0]!.fills).toEqual(['m-1', 'm-3']);
    expect(breaches[0]!.why).toContain(
      'm-1 EUR_USD: filled at the account @1.10000, the simulator: REJECTED; m-3 EUR_USD: filled in the simulator @1.10000, the account: nothing 5 s after it',
    );
  });

  it('an intent the simulator never got (an order of an earlier process) is not compared', () => {
    const { guard, live, breaches } = rigGuard('fills=0,wait=1s');
    live.fill('old-1', T0, 1.1);
    guard.priced(T0 + 10_000);
    expect(guard.missed).toBe(0);
    expect(breaches).toEqual([]);
  });

  it('the realized P/L gap over the window, intent by intent: past the tolerance halts; a gap older than the window drops out; a fill waiting for its counterpart is no gap yet', () => {
    const a = rigGuard('pl=20,window=1m');
    for (const cid of ['p-1', 'p-2']) a.guard.expect(cid);
    a.live.fill('p-1', T0, 1.1, 15);
    expect(a.guard.plGap).toBe(0);
    a.sim.fill('p-1', T0 + 1000, 1.1, 5);
    expect(a.guard.plGap).toBeCloseTo(10, 6);
    // 70 s later the first pair is out of the window: 12 against 0 is within 20.
    a.guard.priced(T0 + 70_000);
    expect(a.guard.plGap).toBe(0);
    a.live.fill('p-2', T0 + 70_000, 1.1, 12);
    a.sim.fill('p-2', T0 + 71_000, 1.1, 0);
    expect(a.guard.plGap).toBeCloseTo(12, 6);
    expect(a.breaches).toEqual([]);
    const b = rigGuard('pl=20,window=1m');
    for (const cid of ['p-1', 'p-2']) b.guard.expect(cid);
    b.live.fill('p-1', T0, 1.1, 15);
    b.sim.fill('p-1', T0 + 1000, 1.1, 5);
    b.live.fill('p-2', T0 + 2000, 1.1, 12);
    expect(b.breaches).toEqual([]);
    b.sim.fill('p-2', T0 + 3000, 1.1, 0);
    expect(b.breaches).toHaveLength(1);
    expect(b.breaches[0]!.tolerance).toBe('pl');
    expect(b.breaches[0]!.fills).toEqual(['p-1', 'p-2']);
    expect(b.breaches[0]!.why).toBe(
      'drift guard: pl 22.00 past --max-drift pl=20: realized P/L over the last 1m, account less simulator, intent by intent: 22.00 (p-1 +10.00, p-2 +12.00)',
    );
  });
});
