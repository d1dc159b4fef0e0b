import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { backtestRun } from './cli.ts';
import { newYorkDate, nextRollover } from '../../src/domain/new-york.ts';

/**
 * The books' financing (docs/portfolios.md, "The books": Financing): a portfolio backtest with daily
 * financing on (config/default.json: the sample's own bid/ask, financing at 17:00 New York, all of
 * 2024) pays each book its part of every DAILY_FINANCING, so the books' financing adds up to the
 * account's to the cent, a book that held a trade over a rollover has a financing of its own, and a
 * book's trades in trades.csv carry its financing. On a netting account each strategy apart, on one
 * that nets across strategies (where a book's units are no longer the account trades it opened) and
 * on a hedging account. Real CLI runs on the bundled sample.
 */

const STRATS = ['strategies/sma-cross.ts', 'strategies/breakout-tpsl.ts'];
const NAMES = ['sma-cross', 'breakout-tpsl'];
const HOUR = 3_600_000;

interface Figures {
  financing: number;
  strategies: Record<string, { financing: number; trades: number }>;
}

/** Runs a backtest into a fresh runs folder; returns its summary and its folder. */
const run = (args: string[]) => backtestRun<Figures>(args, 'fxflow-financing-');

/** Whether a trade open from `open` to `close` was held over a charged rollover (17:00 New York, Monday to Friday). */
function heldOverRollover(open: number, close: number): boolean {
  for (let r = nextRollover(open); r <= close - HOUR; r = nextRollover(r)) {
    const weekday = new Date(newYorkDate(r)).getUTCDay();
    if (weekday >= 1 && weekday <= 5) return true;
  }
  return false;
}

/** Per strategy: whether it held a trade over a rollover, and its trades' financing (trades.csv). */
function booksOf(dir: string, end: number): Map<string, { held: boolean; financing: number }> {
  const [head, ...rows] = readFileSync(join(dir, 'trades.csv'), 'utf8').trim().split('\n');
  const h = head!.split(',');
  const col = (c: string[], name: string): string => c[h.indexOf(name)]!;
  const out = new Map<string, { held: boolean; financing: number }>();
  for (const r of rows) {
    const c = r.split(',');
    const name = c[c.length - 1]!;
    const b = out.get(name) ?? { held: false, financing: 0 };
    const close = col(c, 'closeEpochMs') === '' ? end : Number(col(c, 'closeEpochMs'));
    b.held ||= heldOverRollover(Number(col(c, 'openEpochMs')), close);
    b.financing += Number(col(c, 'financing'));
    out.set(name, b);
  }
  return out;
}

const tenThousandths = (x: number): number => Math.round(x * 10_000);

describe('the books of a portfolio backtest with financing (sma-cross + breakout-tpsl, 2024)', () => {
  it.each([
    ['a netting account, each strategy apart', []],
    ['a netting account across strategies', ['--portfolio-netting', 'account']],
    ['a hedging account', ['--hedging', '--balance', '100000000']],
  ])(
    "%s: the books' financing adds up to the account's; each book that held a trade over a rollover has its own",
    async (_kind, flags) => {
      const r = await run([...STRATS, '--financing', '--from', '2024-01-01', '--to', '2025-01-01', ...flags]);
      const tx = readFileSync(join(r.dir, 'transactions.jsonl'), 'utf8');
      expect(tx.match(/"type":"DAILY_FINANCING"/g)?.length ?? 0).toBeGreaterThan(100);
      const s = r.summary.strategies;
      expect(Object.keys(s)).toEqual(NAMES);
      expect(r.summary.financing).not.toBe(0);
      // To the cent (in fact to the 1/10,000 the simulator rounds to).
      expect(tenThousandths(NAMES.reduce((a, n) => a + s[n]!.financing, 0))).toBe(
        tenThousandths(r.summary.financing),
      );
      const books = booksOf(r.dir, Date.parse('2025-01-01T00:00:00Z'));
      for (const n of NAMES) {
        const b = books.get(n)!;
        // Both strategies held trades over rollovers (the check below is not empty).
        expect(b.held, n).toBe(true);
        expect(s[n]!.financing, n).not.toBe(0);
        // A book's financing is its trades' (trades.csv, closed and open at the end).
        expect(tenThousandths(b.financing), n).toBe(tenThousandths(s[n]!.financing));
      }
    },
    60_000,
  );
});
