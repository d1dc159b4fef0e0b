// A portfolio on a live (sandbox) account, in process: the books at a stop are the books after a
// restart on the same journal (folded again from its transactions), each member's state comes back,
// the books add up to the account, and a first start on an account holding a trade is refused.
import { afterEach, describe, expect, it } from 'vitest';
import { toUnits } from '../../src/domain/money.ts';
import type { Ledger } from '../../src/domain/ledger.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import type { RunMember } from '../../src/runner/session/runner-options.ts';
import type { Runner } from '../../src/runner/session/runner.ts';
import { defineStrategy, type Params, type Strategy } from '../../src/strategy/api.ts';
import { pingPong, pricePath, pushPrices, rig, settle, until, type Rig } from '../runner/harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const path = pricePath(40);

/** Pushes `path[from..to)` and waits until the runner has handled each. */
const prices = (rg: Rig, runner: Runner, from: number, to: number, seen: number): Promise<number> =>
  pushPrices(rg, runner, path, from, to, seen);

/** Buys `units` every `every`-th tick, never sells: its trades pile up (on a netting account too, nobody's order reduces them). */
const piler = defineStrategy({
  params: { every: 4, units: '500' },
  subscribe: { ticks: ['EUR_USD'] },
  init: () => ({ ticks: 0 }),
  onTick(ctx, s) {
    const ticks = s.ticks + 1;
    return ticks % ctx.params.every === 0
      ? { state: { ticks }, intents: [ctx.market('EUR_USD', ctx.params.units)] }
      : { state: { ticks } };
  },
});

const members: RunMember[] = [
  {
    strategy: pingPong as unknown as Strategy<Params, unknown>,
    name: 'pp',
    params: { every: 3, units: '1000' },
  },
  {
    strategy: piler as unknown as Strategy<Params, unknown>,
    name: 'piler',
    params: { every: 4, units: '500' },
  },
];

const portfolio = {
  strategy: { name: 'portfolio', params: {}, subscribe: { ticks: ['EUR_USD'] } } as never,
  name: 'pp+piler',
  params: {},
  members,
};

/** A book as plain figures: its open trades (ID, units) and its realized P/L. */
function figures(runner: Runner): Record<string, { trades: [string, number][]; pl: number }> {
  const out: Record<string, { trades: [string, number][]; pl: number }> = {};
  for (const b of runner.live!.books)
    out[b.name] = {
      trades: [...b.portfolio.ledger.trades.values()].map((t) => [t.id, t.unitsNum]),
      pl: b.portfolio.ledger.pl,
    };
  return out;
}

describe('a portfolio run across a stop and a restart (sandbox account)', () => {
  it('each book, each state and the tags come back from the journal; the books add up to the account', async () => {
    r = await rig();
    const first = r.runner(portfolio);
    await first.start();
    await prices(r, first, 0, 14, 0);
    // The piler's buys on the 4th, 8th and 12th price filled, and every order sent has its outcome
    // in the journal (and the books) before anything is read.
    await until(() => figures(first).piler!.trades.length === 3, "the piler's third fill");
    await settle(r, first);
    const before = figures(first);
    const states = first.live!.state;
    await first.stop('first');
    // Both traded: the piler holds its trades, every order of each carries its tag.
    expect(before.piler!.trades.length).toBeGreaterThanOrEqual(3);
    const txs = Journal.read(r.journalDir).transactions;
    const tags = new Set(
      txs
        .filter((t) => t.type === 'MARKET_ORDER')
        .map((t) => (t as { clientExtensions?: { tag?: string } }).clientExtensions?.tag),
    );
    expect(tags).toEqual(new Set(['pp', 'piler']));

    const second = r.runner(portfolio);
    await second.start();
    console.log(
      `[portfolio restart] before the stop ${JSON.stringify(before)}; after the restart ${JSON.stringify(figures(second))}`,
    );
    expect(figures(second)).toEqual(before);
    expect(second.live!.state).toEqual(states);
    // Trading goes on from there, and the books still add up to the account.
    await prices(r, second, 14, 30, 0);
    // Its buys on the 16th, 20th, 24th and 28th price.
    await until(() => figures(second).piler!.trades.length === 7, "the piler's seventh fill");
    await settle(r, second);
    const after = figures(second);
    expect(after.piler!.trades.length).toBeGreaterThan(before.piler!.trades.length);
    const account = second.portfolio.ledger;
    // P/L at the last mid (balance less the deposit, plus the open trades at mid): on a netting
    // account one strategy's sell may close another's trade there, so realized P/L alone would not add up.
    const last = path[29]!;
    const mid = (last.bid + last.ask) / 2;
    const plAtMid = (l: Ledger, deposit: number): number => {
      let u = 0;
      for (const t of l.trades.values()) u += (mid - t.priceNum) * t.unitsNum;
      return toUnits(l.balance) - deposit + u;
    };
    const deposit = toUnits(second.portfolio.initialBalance);
    let sum = 0;
    for (const b of second.live!.books) sum += plAtMid(b.portfolio.ledger, deposit);
    expect(Math.abs(sum - plAtMid(account, deposit))).toBeLessThan(0.001);
    const units = (f: { trades: [string, number][] }): number => f.trades.reduce((a, [, u]) => a + u, 0);
    const accountUnits = [...account.trades.values()].reduce((a, t) => a + t.unitsNum, 0);
    expect(units(after.pp!) + units(after.piler!)).toBe(accountUnits);
    const res = await second.stop('second');
    expect(Object.keys(res.summary.strategies ?? {})).toEqual(['pp', 'piler']);
    expect(res.report).toMatch(/Strategies \(each its own book/);
  });

  it('a journal goes on only with what wrote it: the portfolio with every member it names, or the one strategy', async () => {
    r = await rig();
    const first = r.runner(portfolio);
    await first.start();
    await prices(r, first, 0, 9, 0);
    await until(() => figures(first).piler!.trades.length === 2, "the piler's two fills");
    await settle(r, first);
    await first.stop('first');
    const refused = async (o: Partial<Parameters<Rig['runner']>[0]>, message: RegExp): Promise<void> => {
      const x = r!.runner(o);
      await expect(x.start()).rejects.toThrow(message);
      x.journal.close();
    };
    // A member left out: its book and state would be folded into the others'.
    await refused(
      { ...portfolio, name: 'pp', members: [members[0]!] },
      /journal .* is the portfolio's of pp, piler, and this run lacks piler: each strategy's book and state are kept by name/,
    );
    // One strategy on the portfolio's journal.
    await refused(
      {},
      /journal .* is the portfolio's of pp, piler, and this run is one strategy \(ping-pong\)/,
    );
    // The whole portfolio again, and one member more (a new book, empty), go on.
    const more = r.runner({
      ...portfolio,
      name: 'pp+piler+pp2',
      members: [...members, { ...members[0]!, name: 'pp2' }],
    });
    await more.start();
    expect(more.live!.books.map((b) => [b.name, b.portfolio.ledger.trades.size > 0])).toEqual([
      ['pp', expect.any(Boolean)],
      ['piler', true],
      ['pp2', false],
    ]);
    await more.stop('more');
    // A portfolio on one strategy's journal.
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const single = join(mkdtempSync(join(tmpdir(), 'fxflow-single-')), 'j');
    const one = r.runner({ journalDir: single });
    await one.start();
    await one.stop('one');
    await refused(
      { ...portfolio, journalDir: single },
      /journal .* is a single strategy's, and this run is a portfolio \(pp, piler\)/,
    );
  });

  it("a member's own limits refuse its orders on its book, inside the account's, and the other trades on", async () => {
    r = await rig();
    // The piler may hold 1000 units (two of its buys); the account's limits are the defaults.
    const limited = {
      ...portfolio,
      members: [members[0]!, { ...members[1]!, limits: { maxUnits: 1000 } }],
    };
    const run = r.runner(limited);
    await run.start();
    await prices(r, run, 0, 20, 0);
    await until(() => figures(run).piler!.trades.length === 2, "the piler's two fills");
    await settle(r, run);
    const res = await run.stop('limited');
    const f = figures(run);
    const held = (n: string): number => f[n]!.trades.reduce((a, [, u]) => a + u, 0);
    expect(held('piler')).toBe(1000);
    const piler = res.summary.strategies!.piler!;
    // Its buys on the 12th, 16th and 20th price were refused on its book.
    expect(piler.risk?.refused.maxUnits).toBe(3);
    expect(piler.risk?.limits).toEqual({ maxUnits: 1000 });
    expect(res.summary.strategies!.pp!.risk).toBeUndefined();
    expect(res.summary.strategies!.pp!.trades).toBeGreaterThan(2);
    // The account's gate refused nothing.
    expect(res.risk.breaches).toBe(0);
  });

  it('a first start on an account that holds a trade nobody of the portfolio opened is refused, naming the account', async () => {
    r = await rig();
    // One strategy's run leaves a trade open on the account.
    const single = r.runner();
    await single.start();
    await prices(r, single, 0, 3, 0);
    await settle(r, single);
    await single.stop('leave it open');
    expect((await r.rest.account(r.accountID)).account.trades?.length).toBe(1);
    const { mkdtempSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const p = r.runner({ ...portfolio, journalDir: mkdtempSync(join(tmpdir(), 'fxflow-portfolio-')) });
    await expect(p.start()).rejects.toThrow(
      new RegExp(
        `account ${r.accountID} holds 1 open trade\\(s\\) and 0 pending entry order\\(s\\) that no strategy of this portfolio \\(pp, piler\\) opened`,
      ),
    );
    p.journal.close();
  });
});
