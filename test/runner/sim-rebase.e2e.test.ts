import { cpSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SimAccountState } from '../../src/adapters/sim/seed.ts';
import type { OrderIntent } from '../../src/domain/intents.ts';
import type { Ledger } from '../../src/domain/ledger.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import type { Runner } from '../../src/runner/session/runner.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import { duplicateOrders, pricePath, rig, waitTicks, type Rig } from './harness.ts';

// `--broker sim --journal-rebase-every N`: the journal is rebased onto the simulated account, so it
// stays small, and a restart (or a crash right after a rebase) restores the same simulated account,
// strategy state and transaction ID sequence as a run whose journal kept every transaction.

const rigs: Rig[] = [];
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.close();
});

type ChurnState = { ticks: number; intents: number; fills: number; last: number; again: number };

/**
 * Keeps the simulated account busy: longs with a TP and an SL, longs with a trailing stop, buy limits
 * below the market (cancelled later), and a position close every 24 ticks. Pure, deterministic.
 */
const churn = defineStrategy({
  params: {},
  subscribe: { ticks: ['EUR_USD'] },
  init: (): ChurnState => ({ ticks: 0, intents: 0, fills: 0, last: 0, again: 0 }),
  onTick(ctx, s) {
    const ticks = s.ticks + 1;
    const at = ctx.tick?.at ?? ctx.now;
    const bid = ctx.tick?.bid ?? 0;
    const intents: OrderIntent[] = [];
    switch (ticks % 8) {
      case 1:
        intents.push(ctx.market('EUR_USD', '1000', { tp: { distance: 0.0006 }, sl: { distance: 0.0006 } }));
        break;
      case 3:
        intents.push(ctx.limit('EUR_USD', '700', bid - 0.0004));
        break;
      case 5:
        intents.push(ctx.market('EUR_USD', '500', { trailing: 0.0005 }));
        break;
      case 7:
        for (const o of ctx.orders('EUR_USD')) if (o.type === 'LIMIT') intents.push(ctx.cancel(o.id));
        break;
    }
    if (ticks % 24 === 0) intents.push(ctx.closePosition('EUR_USD'));
    return {
      state: {
        ticks,
        intents: s.intents + intents.length,
        fills: s.fills,
        last: Math.max(s.last, at),
        again: at <= s.last ? s.again + 1 : s.again,
      },
      intents,
    };
  },
  onTransaction(ctx, s) {
    return ctx.transaction?.type === 'ORDER_FILL' ? { state: { ...s, fills: s.fills + 1 } } : undefined;
  },
});

const opts = (rebaseEvery: number, journalDir?: string) => ({
  broker: 'sim' as const,
  strategy: churn as never,
  name: 'churn',
  params: {},
  rebaseEvery,
  ...(journalDir !== undefined ? { journalDir } : {}),
});
const path = pricePath(120);
const EVERY = 8;
const SPLIT = 68;

/** Waits until the runner's pricing stream has delivered `n` lines (the first: the latest price). */
async function delivered(runner: Runner, n: number): Promise<void> {
  const t0 = Date.now();
  while (runner.pricingStats.delivered < n) {
    if (Date.now() - t0 > 10_000)
      throw new Error(`pricing stream delivered ${runner.pricingStats.delivered} of ${n} lines`);
    await new Promise((res) => setTimeout(res, 5));
  }
}

/** Pushes path[i] and waits until the runner has handled it and a rebase it started has run. */
async function push(rg: Rig, runner: Runner, i: number): Promise<void> {
  rg.sandbox.setTime(path[i]!.time);
  rg.sandbox.pushPrice(path[i]!);
  await waitTicks(runner, runner.ticks + 1);
  await new Promise((res) => setTimeout(res, 2));
}

/** The simulated account without its clock and latest prices. */
function accountOf(s: SimAccountState): Omit<SimAccountState, 'time' | 'quotes'> {
  const { time: _t, quotes: _q, ...rest } = s;
  return rest;
}

/** What a ledger holds (money, trades, pending orders, realized P/L per instrument, last ID). */
function ledgerOf(l: Ledger): unknown {
  return {
    balance: l.balance,
    pl: l.pl,
    financing: l.financing,
    commission: l.commission,
    fees: l.guaranteedExecutionFees,
    last: l.lastTransactionID,
    trades: [...l.trades.values()],
    instrumentPL: [...l.instrumentPL],
    // A pending order's LedgerOrder fields: the simulator's ledger files its working orders, which
    // carry these and the simulator's own (level, book state), as its pending orders.
    orders: [...l.pendingOrders.values()].map(
      ({ id, type, created, instrument, tradeID, clientExtensions }) => ({
        id,
        type,
        created,
        instrument,
        tradeID,
        clientExtensions,
      }),
    ),
  };
}

const bytes = (dir: string): number => readdirSync(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);

describe('--broker sim journal rebase', () => {
  it('many transactions, rebase every 8: the journal stays small; a restart and a crash right after a rebase restore the same account, orders, balance, ID sequence and strategy state as an unrebased run', async () => {
    // The reference: the same prices, one process, a journal that keeps every transaction.
    const ref = await rig();
    rigs.push(ref);
    const whole = ref.runner(opts(0));
    await whole.start();
    await delivered(whole, 1);
    for (let i = 0; i < path.length; i++) await push(ref, whole, i);
    await whole.stop('reference');

    const r = await rig();
    rigs.push(r);
    const first = r.runner(opts(EVERY));
    await first.start();
    await delivered(first, 1);
    let most = 0;
    let rebases = 0;
    let baseline = '0';
    const crashDir = mkdtempSync(join(tmpdir(), 'fxflow-sim-crash-'));
    let atCrash: { account: ReturnType<typeof accountOf>; state: ChurnState } | undefined;
    // Stopped after path[SPLIT - 1]: the strategy's 69th tick, whose market order (with a trailing
    // stop) waits in the simulator for the next price; it is sent again after the restart.
    for (let i = 0; i < SPLIT; i++) {
      await push(r, first, i);
      most = Math.max(most, first.journal.transactionCount);
      const b = (first.journal.contents().baseline as { lastTransactionID: string }).lastTransactionID;
      if (b === baseline) continue;
      rebases++;
      baseline = b;
      // Right after a rebase (nothing journaled since: the log is empty) with a trade, a trailing
      // stop and a limit: copy the journal as a crash now would leave it.
      const s = first.sim!.snapshot();
      const types = new Set((s.orders ?? []).map((o) => o.type));
      if (
        atCrash === undefined &&
        statSync(join(first.journal.dir, 'journal.log')).size === 0 &&
        types.has('TRAILING_STOP_LOSS') &&
        types.has('LIMIT')
      ) {
        cpSync(first.journal.dir, crashDir, { recursive: true });
        atCrash = { account: accountOf(s), state: first.state as ChurnState };
      }
    }
    const beforeStop = accountOf(first.sim!.snapshot());
    await first.stop('restart');
    const stateAtStop = first.state as ChurnState;

    // The restart: from the rebased baseline plus the journal's tail.
    const second = r.runner(opts(EVERY));
    await second.start();
    const restored = accountOf(second.sim!.snapshot());
    const sameLedgers = [ledgerOf(second.portfolio.ledger), ledgerOf(second.sim!.ledger)];
    const restoredState = second.state as ChurnState;
    await delivered(second, 1);
    for (let i = SPLIT; i < path.length; i++) {
      await push(r, second, i);
      most = Math.max(most, second.journal.transactionCount);
    }
    const res = await second.stop('end');
    const j = Journal.read(r.journalDir);
    const refJournal = Journal.read(ref.journalDir);
    const final = accountOf(second.sim!.snapshot());
    const reference = accountOf(whole.sim!.snapshot());
    console.log(
      `[sim rebase] ${reference.lastTransactionID} simulator transactions over ${path.length} prices and a restart; rebase every ${EVERY}: ${rebases} rebases in the first run, the journal held at most ${most} transactions, ` +
        `${j.transactions.length} at the end (${bytes(r.journalDir)} bytes) against ${refJournal.transactions.length} (${bytes(ref.journalDir)} bytes) unrebased; ` +
        `at the stop ${beforeStop.trades!.length} trades, ${beforeStop.orders!.length} orders (${beforeStop.orders!.map((o) => o.type).join(', ')}), balance ${beforeStop.balance}, last ${beforeStop.lastTransactionID}; ` +
        `final balance ${final.balance} (unrebased ${reference.balance}); strategy ${JSON.stringify(second.state)}; recovered ${JSON.stringify(res.recovered)}`,
    );
    expect(rebases).toBeGreaterThanOrEqual(3);
    expect(most).toBeLessThan(EVERY + 10);
    expect(j.transactions.length).toBeLessThan(EVERY + 10);
    expect(Number(reference.lastTransactionID)).toBeGreaterThan(EVERY * 10);
    expect(beforeStop.trades!.length + beforeStop.orders!.length).toBeGreaterThan(0);

    // The restart restored the simulated account, the portfolio (one restore: the same ledger) and the strategy.
    expect(restored).toEqual(beforeStop);
    expect(sameLedgers[0]).toEqual(sameLedgers[1]);
    expect(restoredState).toEqual(stateAtStop);
    expect(res.recovered.restoredState).toBe(true);
    expect(res.recovered.resubmitted).toBe(1);
    // The journal's tail continues the sequence from the baseline: no gap, no repeat.
    const base = Number((j.baseline as { lastTransactionID: string }).lastTransactionID);
    expect(j.transactions.map((t) => t.id)).toEqual(j.transactions.map((_, k) => String(base + 1 + k)));
    expect(duplicateOrders(j.transactions)).toBe(0);
    // ...and ends where the unrebased run ends, with the same account and strategy state.
    expect(final).toEqual(reference);
    expect(second.state).toEqual(whole.state);
    expect((second.state as ChurnState).again).toBe(0);

    // A crash right after a rebase: the rebased journal alone restores the account and the state it had.
    expect(atCrash).toBeDefined();
    const third = r.runner(opts(EVERY, crashDir));
    await third.start();
    const fromCrash = accountOf(third.sim!.snapshot());
    const crashState = third.state;
    await third.stop('crash copy');
    expect(fromCrash).toEqual(atCrash!.account);
    expect(crashState).toEqual(atCrash!.state);
  }, 60_000);
});
