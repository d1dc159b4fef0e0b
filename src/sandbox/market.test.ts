import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadInstruments } from '../domain/instrument.ts';
import { parseTime } from '../domain/time.ts';
import { SandboxAccounts } from './accounts.ts';
import { SandboxMarket } from './market.ts';
import { HttpError } from './v3/context.ts';

const instruments = loadInstruments();
const START = parseTime('2024-01-02T00:00:00Z'); // a Tuesday: FX open

/** A market over one real account (its own SimBroker), recording what the streams would hear. */
function market(marketHours = true): { m: SandboxMarket; heard: string[]; accounts: SandboxAccounts } {
  const accounts = new SandboxAccounts({
    specs: [{}],
    instruments,
    start: START,
    marketHours,
    fill: { slippage: 'none', latency: 'none' },
    latencyTimeoutMs: 1000,
  });
  const heard: string[] = [];
  const m = new SandboxMarket({
    start: START,
    accounts: accounts.byId,
    instruments,
    marketHours,
    onPrice: (n) => heard.push(n),
  });
  return { m, heard, accounts };
}

describe('SandboxMarket (the sandbox clock and its prices)', () => {
  it('the clock never moves back: after any mix of prices and time moves it is the latest time given (property)', () => {
    const step = fc.record({ price: fc.boolean(), dt: fc.integer({ min: -3_600_000, max: 3_600_000 }) });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const { m, heard } = market();
        let latest = START;
        let prices = 0;
        for (const s of steps) {
          const t = START + s.dt;
          if (s.price) {
            m.tick({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002, time: t });
            prices++;
            expect(m.quoteTime('EUR_USD')).toBe(Math.max(t, latest));
          } else m.setTime(t);
          latest = Math.max(latest, t);
          expect(m.now).toBe(latest);
        }
        expect(heard.length).toBe(prices);
      }),
      { numRuns: 50 },
    );
  });

  it('a bad price is a 400 naming what is wrong, and changes neither the clock nor the quote', () => {
    const { m, heard } = market();
    expect(() => m.tick({ instrument: 'EUR_USD', bid: 1.2, ask: 1.1, time: START + 1000 })).toThrow(
      /ask >= bid/,
    );
    expect(() => m.tick({ instrument: 'NOPE_XXX', bid: 1, ask: 1 })).toThrow(HttpError);
    expect(m.now).toBe(START);
    expect(m.quoteTime('EUR_USD')).toBeUndefined();
    expect(heard).toEqual([]);
  });

  it("a PRICE is tradeable by the instrument's hours at the sandbox clock, unless market hours are off", () => {
    const saturday = parseTime('2024-01-06T12:00:00Z');
    for (const hours of [true, false]) {
      const { m, accounts } = market(hours);
      const account = accounts.account('101-001-0000001-001');
      expect(m.priceJSON(account, 'EUR_USD')).toBeUndefined();
      m.tick({ instrument: 'EUR_USD', bid: 1.1, ask: 1.1002 });
      expect(m.priceJSON(account, 'EUR_USD')).toMatchObject({
        type: 'PRICE',
        tradeable: true,
        status: 'tradeable',
        closeoutBid: '1.10000',
      });
      m.setTime(saturday);
      expect(m.priceJSON(account, 'EUR_USD')).toMatchObject({
        tradeable: !hours,
        status: hours ? 'non-tradeable' : 'tradeable',
      });
    }
  });
});
