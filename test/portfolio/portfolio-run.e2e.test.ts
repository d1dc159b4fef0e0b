// Portfolio LIVE runs end to end: `fxflow run a.ts b.ts` and `fxflow run --portfolio p.json` as real
// processes against fxflow's v20 sandbox (real HTTP, real streams, real journal). What a member's book
// holds (status.json `books`) is checked against what the ACCOUNT holds, grouped by the trades'
// clientExtensions.tag; through a kill -9 and a restart, a member that throws, the kill switch, and
// the refusal of a first start on an account that already holds something.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/server.ts';
import {
  accountTransactions,
  duplicateOrders,
  type FxflowRun,
  rig,
  type Rig,
  spawnFxflowRun,
  startFxflowRun,
  until,
  watch,
} from '../runner/harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const LIVE_A = 'test/portfolio/live-a-strategy.ts';
const LIVE_B = 'test/portfolio/live-b-strategy.ts';
const THROWER = 'test/portfolio/thrower-strategy.ts';

let r: Rig | undefined;
const procs: FxflowRun[] = [];
afterEach(async () => {
  for (const p of procs.splice(0)) p.proc.kill('SIGKILL');
  await r?.close();
  r = undefined;
});

/**
 * The sandbox's prices, one step at a time: each step moves its manual clock 1 s on (from Tuesday
 * 2 January 2024 10:00 UTC, markets open) and pushes one price per instrument, on a slow wave
 * around the instrument's level (ask = bid + 1.5 pips).
 */
class Feed {
  readonly #sandbox: Sandbox;
  readonly #levels: readonly (readonly [string, number])[];
  #step = 0;
  constructor(sandbox: Sandbox, levels: Record<string, number>) {
    this.#sandbox = sandbox;
    this.#levels = Object.entries(levels);
  }
  push(): void {
    const i = this.#step++;
    const time = Date.UTC(2024, 0, 2, 10, 0) + i * 1000;
    this.#sandbox.setTime(time);
    for (const [instrument, level] of this.#levels) {
      const bid = Math.round((level + 0.0006 * Math.sin(i / 5) + 0.0002 * Math.cos(i / 2)) * 1e5) / 1e5;
      this.#sandbox.pushPrice({ instrument, bid, ask: Math.round((bid + 0.00015) * 1e5) / 1e5, time });
    }
  }
}

const BOTH = { EUR_USD: 1.1, GBP_USD: 1.27 };

/**
 * Feeds prices, one step every 40 ms (the pace of the input, not a wait for anything), until
 * `pred` holds; throws naming `what` after `ms`.
 */
async function drive(
  feed: Feed,
  pred: () => boolean | Promise<boolean>,
  what: string,
  ms = 30_000,
): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    if (await pred()) return;
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms feeding prices until ${what}`);
    feed.push();
    await new Promise((res) => setTimeout(res, 40));
  }
}

/** The fields of a transaction these tests read (orders, fills, cancels). */
interface Tx {
  id: string;
  type: string;
  reason?: string;
  units?: string;
  positionFill?: string;
  orderID?: string;
  clientExtensions?: { id?: string; tag?: string };
  tradeClientExtensions?: { id?: string; tag?: string };
}

const txsSince = async (rg: Rig, after: string): Promise<Tx[]> =>
  (await accountTransactions(rg, after)) as unknown as Tx[];

/** The orders a member sent to open exposure: market orders tagged with its name, not reduce-only. */
const opensOf = (txs: readonly Tx[], name: string): Tx[] =>
  txs.filter(
    (t) => t.type === 'MARKET_ORDER' && t.clientExtensions?.tag === name && t.positionFill !== 'REDUCE_ONLY',
  );

/**
 * What is wrong with the members' orders: an order tagged with a member's name has a client ID
 * `<name>-<runId>-<n>` (a hedging book's second close side may add `-short`; the runner's own closes
 * `fxflow-…`) and, when it may open a
 * trade, the same tag for that trade; an order whose client ID starts with a member's name carries
 * its tag. Empty when all is well.
 */
function tagProblems(txs: readonly Tx[], names: readonly string[]): string[] {
  const problems: string[] = [];
  for (const t of txs) {
    if (!t.type.endsWith('_ORDER')) continue;
    const tag = t.clientExtensions?.tag;
    const cid = t.clientExtensions?.id ?? '';
    const byID = names.find((n) => cid.startsWith(`${n}-`));
    if (byID !== undefined && tag !== byID)
      problems.push(`${t.type} ${t.id} client ID ${cid} has tag ${String(tag)}, not ${byID}`);
    if (tag === undefined || !names.includes(tag)) continue;
    const escaped = tag.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // The member's own client IDs; the runner's closes of a failed member's book are in its reserved `fxflow-` namespace.
    if (!new RegExp(`^${escaped}-.+-\\d+(-short)?$`).test(cid) && !cid.startsWith('fxflow-'))
      problems.push(`${t.type} ${t.id} tagged ${tag} has client ID ${cid || '(none)'}`);
    const opening =
      (t.type === 'MARKET_ORDER' || t.type === 'LIMIT_ORDER') && t.positionFill !== 'REDUCE_ONLY';
    if (opening && t.tradeClientExtensions?.tag !== tag)
      problems.push(
        `${t.type} ${t.id} tagged ${tag} opens trades tagged ${String(t.tradeClientExtensions?.tag)}`,
      );
  }
  return problems;
}

/** One open trade as the books and the account are compared: ID, instrument, signed units. */
interface Held {
  id: string;
  instrument: string;
  units: number;
}

/** A book as compared: its trades by ID, and its net units per instrument (0 omitted). */
interface BookView {
  trades: Held[];
  positions: Record<string, number>;
}

const byID = (a: Held, b: Held): number => Number(a.id) - Number(b.id);

/** The book that `trades` make: the trades sorted, the net units per instrument summed from them. */
function bookOf(trades: readonly Held[]): BookView {
  const positions: Record<string, number> = {};
  for (const t of trades) positions[t.instrument] = (positions[t.instrument] ?? 0) + t.units;
  for (const [k, v] of Object.entries(positions)) if (v === 0) delete positions[k];
  return { trades: [...trades].sort(byID), positions: sortKeys(positions) };
}

function sortKeys(o: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));
}

/** The account's open trades grouped by their clientExtensions.tag (`(untagged)` for none). */
async function accountBooks(rg: Rig): Promise<Record<string, BookView>> {
  const groups: Record<string, Held[]> = {};
  for (const t of await rg.rest.openTrades(rg.accountID)) {
    const tag = t.clientExtensions?.tag ?? '(untagged)';
    (groups[tag] ??= []).push({ id: t.id, instrument: t.instrument, units: Number(t.currentUnits) });
  }
  return Object.fromEntries(
    Object.entries(groups)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => [k, bookOf(v)]),
  );
}

/** A member's entry in status.json `books`. */
interface StatusBook {
  positions?: Record<string, number | string>;
  trades?: { id: string; instrument: string; units: number | string }[];
  failed?: string;
}

/** The run's status page URL, from its `Live status: <url>` line. */
function statusUrl(run: FxflowRun): string {
  const m = /Live status: (\S+)/.exec(run.out());
  if (m === null) throw new Error(`no "Live status:" line in: ${run.out()}`);
  return m[1]!;
}

/** GET <status url>/status.json's `books`. */
async function statusBooks(run: FxflowRun): Promise<Record<string, StatusBook>> {
  const url = statusUrl(run);
  const res = await fetch(new URL('status.json', url.endsWith('/') ? url : `${url}/`));
  if (!res.ok) throw new Error(`GET status.json: HTTP ${res.status}`);
  const body = (await res.json()) as { books?: Record<string, StatusBook> };
  if (body.books === undefined) throw new Error('status.json has no `books`');
  return body.books;
}

/** A status.json book as compared with the account: its trades sorted; its positions as numbers. */
function viewOfStatus(b: StatusBook): BookView {
  return {
    trades: (b.trades ?? [])
      .map((t) => ({ id: String(t.id), instrument: t.instrument, units: Number(t.units) }))
      .sort(byID),
    positions: sortKeys(
      Object.fromEntries(Object.entries(b.positions ?? {}).map(([k, v]) => [k, Number(v)])),
    ),
  };
}

/**
 * Waits until the books of status.json are the account's open trades grouped by tag: the same
 * members, and for each the same trade IDs, instruments and units and the same net units per
 * instrument; no open trade of anyone else (untagged or another tag). Returns the books compared;
 * throws with both sides as last seen when they never meet.
 */
async function booksMatchAccount(
  run: FxflowRun,
  rg: Rig,
  names: readonly string[],
  ms = 15_000,
): Promise<Record<string, BookView>> {
  let last = { books: {} as Record<string, BookView>, account: {} as Record<string, BookView> };
  const same = async (): Promise<boolean> => {
    const books = await statusBooks(run);
    const account = await accountBooks(rg);
    last = {
      books: Object.fromEntries(Object.entries(books).map(([k, v]) => [k, viewOfStatus(v)])),
      account,
    };
    const expected = Object.fromEntries(names.map((n) => [n, account[n] ?? bookOf([])]));
    const others = Object.keys(account).filter((k) => !names.includes(k));
    return (
      others.length === 0 &&
      JSON.stringify(Object.keys(last.books).sort()) === JSON.stringify([...names].sort()) &&
      names.every((n) => JSON.stringify(last.books[n]) === JSON.stringify(expected[n]))
    );
  };
  try {
    await until(same, 'status.json books to equal the account trades grouped by tag', ms);
  } catch (e) {
    throw new Error(
      `${(e as Error).message}\nstatus.json books: ${JSON.stringify(last.books)}\naccount by tag:    ${JSON.stringify(last.account)}`,
    );
  }
  return last.books;
}

/** `n` open trades per member, as `name n` (for the logs). */
const counts = (books: Record<string, BookView>): string =>
  Object.entries(books)
    .map(([k, v]) => `${k} ${v.trades.length}`)
    .join(', ');

/** The common flags of these runs: a temporary journal and run folder, the status page, no order-rate limit. */
function runArgs(rg: Rig, dir: string, extra: readonly string[] = []): string[] {
  return [
    '--journal',
    rg.journalDir,
    '--out',
    join(dir, 'run'),
    '--log-file',
    join(dir, 'run.log'),
    '--status-port',
    '0',
    // The members' orders are paced by the test's prices (one a second of sandbox time): no limit to trip.
    '--max-orders-per-minute',
    '0',
    // A kill -9 may leave an order unanswered: on loopback a 2 s in-doubt window proves it absent.
    '--request-window',
    '1',
    '--in-doubt-margin',
    '1',
    '--max-intent-age',
    '600',
    ...extra,
  ];
}

/** Writes a portfolio file in `dir` whose modules are given from the repository root (written relative to the file). */
function portfolioFile(
  dir: string,
  entries: readonly { module: string; name: string; params?: Record<string, unknown> }[],
): string {
  const file = join(dir, 'portfolio.json');
  writeFileSync(
    file,
    JSON.stringify({
      strategies: entries.map((e) => ({ ...e, module: relative(dir, join(ROOT, e.module)) })),
    }),
  );
  return file;
}

const output = (run: FxflowRun): string => `${run.out()}\n${run.err()}`;

/**
 * A member's line in the report at the stop: `strategy <name>: …`, or its row of the report's
 * strategies table (`  <name>   <net P/L>   <trades>   <max drawdown>`).
 */
const memberLine = (name: string): RegExp =>
  new RegExp(`^(.*strategy ${name}: |\\s+${name}\\s+-?[\\d,.]+\\s+\\d+\\s)`, 'm');

describe('fxflow run a.ts b.ts: one process, one account, a book per member', () => {
  it('two members on one instrument of a hedging account: books == the tagged trades; again after kill -9 and a restart on the same journal; the kill switch flattens the account and exits 0', async () => {
    r = await rig({ accounts: [{ hedging: true }] });
    const rg = r;
    const names = ['live-a', 'live-b'];
    const feed = new Feed(rg.sandbox, BOTH);
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-run-'));
    const kill = join(dir, 'KILL');
    // live-a: long 1000 every 2nd tick up to 3 trades, then closes its oldest; one parked limit order.
    // live-b: short 2000 every 3rd tick up to 3 trades, then closes its position (reduce-only).
    const args = runArgs(rg, dir, [LIVE_B, '--kill-file', kill]);
    const start = (await rg.rest.summary(rg.accountID)).lastTransactionID;
    let run = await startFxflowRun(rg.sandbox, LIVE_A, args);
    procs.push(run);

    // Both trade on EUR_USD: live-a through its closes of single trades, live-b through a whole close.
    await drive(
      feed,
      async () => {
        const txs = await txsSince(rg, start);
        const held = await accountBooks(rg);
        return (
          opensOf(txs, 'live-a').length >= 5 &&
          opensOf(txs, 'live-b').length >= 4 &&
          (held['live-a']?.trades.length ?? 0) >= 2 &&
          (held['live-b']?.trades.length ?? 0) >= 1
        );
      },
      'live-a opened 5 trades and live-b 4 (each closing some), both holding trades',
    );
    const first = await booksMatchAccount(run, rg, names);
    const parked = (await rg.rest.pendingOrders(rg.accountID)).filter(
      (o) => (o as { clientExtensions?: { tag?: string } }).clientExtensions?.tag === 'live-a',
    );
    console.log(`[portfolio run] before the kill -9: books == tagged trades: ${counts(first)}`);
    expect(first['live-a']!.trades.length).toBeGreaterThanOrEqual(2);
    expect(first['live-a']!.trades.every((t) => t.units === 1000 && t.instrument === 'EUR_USD')).toBe(true);
    expect(first['live-b']!.trades.every((t) => t.units === -2000 && t.instrument === 'EUR_USD')).toBe(true);
    expect(parked).toHaveLength(1);

    // kill -9 while both trade: 4 prices in a row (2 orders), killed at once.
    for (let k = 0; k < 4; k++) feed.push();
    run.proc.kill('SIGKILL');
    await run.exited;
    const restartFrom = (await rg.rest.summary(rg.accountID)).lastTransactionID;
    run = await startFxflowRun(rg.sandbox, LIVE_A, args);
    procs.push(run);
    await booksMatchAccount(run, rg, names);
    await drive(
      feed,
      async () => {
        const txs = await txsSince(rg, restartFrom);
        return opensOf(txs, 'live-a').length >= 3 && opensOf(txs, 'live-b').length >= 3;
      },
      'both members opened 3 more trades after the restart',
    );
    const second = await booksMatchAccount(run, rg, names);
    console.log(`[portfolio run] after kill -9 and a restart: books == tagged trades: ${counts(second)}`);

    const txs = await txsSince(rg, start);
    expect(tagProblems(txs, names)).toEqual([]);
    expect(duplicateOrders(txs as never)).toBe(0);

    // The kill switch: the whole account flat (both books, live-a's parked order), exit 0.
    writeFileSync(kill, '');
    await until(() => run.proc.exitCode !== null, 'the run to exit after the kill switch', 30_000);
    const code = await run.exited;
    const after = {
      trades: (await rg.rest.openTrades(rg.accountID)).length,
      positions: (await rg.rest.openPositions(rg.accountID)).length,
      pending: (await rg.rest.pendingOrders(rg.accountID)).length,
    };
    console.log(
      `[portfolio run] kill switch: exit ${code}; account after ${JSON.stringify(after)}; ${run
        .out()
        .split('\n')
        .filter((l) => /strategy live-[ab]:/.test(l))
        .join(' | ')}`,
    );
    expect(code).toBe(0);
    expect(after).toEqual({ trades: 0, positions: 0, pending: 0 });
    for (const n of names) expect(run.out()).toMatch(memberLine(n));
  }, 150_000);
});

describe('a member that throws is stopped alone', () => {
  it.each([
    ['close (the default)', [] as string[]],
    ['keep', ['--on-strategy-error', 'keep']],
  ])(
    '--on-strategy-error %s: "stopped alone", books.thrower.failed; the other member trades on',
    async (mode, extra) => {
      r = await rig();
      const rg = r;
      const names = ['live-a', 'thrower'];
      const feed = new Feed(rg.sandbox, BOTH);
      const dir = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-thrower-'));
      // Netting account, two instruments: live-a on EUR_USD, the thrower on GBP_USD (1000 long and a
      // parked limit order, then it throws on its 3rd tick with the trade open).
      const start = (await rg.rest.summary(rg.accountID)).lastTransactionID;
      const run = await startFxflowRun(rg.sandbox, LIVE_A, runArgs(rg, dir, [THROWER, ...extra]));
      procs.push(run);
      let thrown: string[] = [];
      await drive(
        feed,
        async () => {
          if (thrown.length === 0)
            thrown = (await accountBooks(rg))['thrower']?.trades.map((t) => t.id) ?? thrown;
          return output(run).includes('stopped alone');
        },
        'a line saying the thrower was "stopped alone"',
      );
      const failedAt = (await rg.rest.summary(rg.accountID)).lastTransactionID;
      const line = output(run)
        .split('\n')
        .find((l) => l.includes('stopped alone'));
      expect(thrown).toHaveLength(1);
      expect(line).toMatch(/thrower/);
      const books = await statusBooks(run);
      expect(books['thrower']?.failed).toMatch(/deliberate failure/);
      expect(books['live-a']?.failed).toBeUndefined();

      // The other member trades on; the thrower's trade is closed (default) or left open (keep).
      await drive(
        feed,
        async () => {
          const txs = await txsSince(rg, failedAt);
          const held = await accountBooks(rg);
          const open = held['thrower']?.trades.map((t) => t.id) ?? [];
          const settled = mode === 'keep' ? open.join() === thrown.join() : open.length === 0;
          return opensOf(txs, 'live-a').length >= 3 && settled;
        },
        `live-a opening 3 more trades, the thrower's trade ${mode === 'keep' ? 'open' : 'closed'}`,
      );
      expect(run.proc.exitCode).toBeNull();
      const after = await txsSince(rg, start);
      const pendingOfThrower = (await rg.rest.pendingOrders(rg.accountID)).filter(
        (o) => (o as { clientExtensions?: { tag?: string } }).clientExtensions?.tag === 'thrower',
      );
      const final = await booksMatchAccount(run, rg, names);
      // The close of the thrower's book: its trade closed by ID (a TRADE_CLOSE market order), or a tagged order.
      const closes = after.filter(
        (t) =>
          t.type === 'MARKET_ORDER' &&
          (thrown.includes((t as { tradeClose?: { tradeID: string } }).tradeClose?.tradeID ?? '') ||
            (t.clientExtensions?.tag === 'thrower' && t.positionFill === 'REDUCE_ONLY')),
      );
      console.log(
        `[portfolio run / thrower, ${mode}] "${line?.trim()}"; failed: ${books['thrower']?.failed}; thrower's trade ${thrown.join()} ${final['thrower']!.trades.length > 0 ? 'open' : 'closed'} (${closes.length} closes of its book), ${pendingOfThrower.length} pending orders of it; books: ${counts(final)}`,
      );
      expect(tagProblems(after, names)).toEqual([]);
      if (mode === 'keep') {
        expect(final['thrower']!.trades.map((t) => t.id)).toEqual(thrown);
        expect(closes).toHaveLength(0);
      } else {
        expect(final['thrower']!.trades).toEqual([]);
        expect(closes.length).toBeGreaterThanOrEqual(1);
        expect(pendingOfThrower).toHaveLength(0);
      }
      expect(final['live-a']!.trades.length).toBeGreaterThanOrEqual(1);
    },
    90_000,
  );

  it("closing the thrower's book on a hedging account where the other member holds older trades on the same side closes the thrower's trade only", async () => {
    r = await rig({ accounts: [{ hedging: true }] });
    const rg = r;
    const names = ['steady', 'thrower'];
    const feed = new Feed(rg.sandbox, BOTH);
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-same-side-'));
    // Both long EUR_USD: steady (live-a, up to 10 trades: it closes none of its own here) opens on
    // every 2nd tick, the thrower on its 4th: steady's first trade is the account's oldest long (the
    // one a FIFO reduce-only sell of 1000 would take).
    const file = portfolioFile(dir, [
      { module: LIVE_A, name: 'steady', params: { units: 1000, every: 2, max: 10, park: false } },
      { module: THROWER, name: 'thrower', params: { instrument: 'EUR_USD', openAfter: 4, throwAfter: 3 } },
    ]);
    const start = (await rg.rest.summary(rg.accountID)).lastTransactionID;
    const run = await startFxflowRun(rg.sandbox, `--portfolio=${file}`, runArgs(rg, dir));
    procs.push(run);
    let before: Record<string, BookView> = {};
    await drive(
      feed,
      async () => {
        const held = await accountBooks(rg);
        if ((held['thrower']?.trades.length ?? 0) > 0 && Object.keys(before).length === 0) before = held;
        return output(run).includes('stopped alone');
      },
      'the thrower "stopped alone"',
    );
    const steadyBefore = before['steady']?.trades.map((t) => t.id) ?? [];
    const throwerTrade = before['thrower']?.trades[0]?.id;
    expect(steadyBefore.length).toBeGreaterThanOrEqual(1);
    expect(Number(steadyBefore[0])).toBeLessThan(Number(throwerTrade));
    // No more prices: steady sends nothing more. The close of the thrower's book (its trade closed by
    // ID, or a tagged order): the trades its fill closed or reduced must be the thrower's only.
    let closed: string[] = [];
    await until(async () => {
      const txs = (await accountTransactions(rg, start)) as unknown as (Tx & {
        tradesClosed?: { tradeID: string }[];
        tradeReduced?: { tradeID: string };
      })[];
      const closes = new Set(
        txs
          .filter(
            (t) =>
              t.type === 'MARKET_ORDER' &&
              ((t as { tradeClose?: { tradeID: string } }).tradeClose?.tradeID === throwerTrade ||
                t.clientExtensions?.tag === 'thrower') &&
              (t as { reason?: string }).reason !== 'CLIENT_ORDER',
          )
          .map((t) => t.id),
      );
      const fills = txs.filter((t) => t.type === 'ORDER_FILL' && closes.has(t.orderID ?? ''));
      closed = fills.flatMap((f) => [
        ...(f.tradesClosed ?? []).map((c) => c.tradeID),
        ...(f.tradeReduced !== undefined ? [f.tradeReduced.tradeID] : []),
      ]);
      return fills.length > 0;
    }, "the fill of the close of the thrower's book");
    const held = await accountBooks(rg);
    const steadyAfter = held['steady']?.trades.map((t) => t.id) ?? [];
    const books = Object.fromEntries(
      Object.entries(await statusBooks(run)).map(([k, v]) => [k, viewOfStatus(v)]),
    );
    console.log(
      `[portfolio run / same side] steady's trades ${steadyBefore.join(', ')}, the thrower's ${throwerTrade}; the close of the thrower's book closed trade(s) ${closed.join(', ')}; the account now holds ${JSON.stringify(held)}; status.json books ${JSON.stringify(books)}`,
    );
    expect(closed).toEqual([throwerTrade]);
    for (const id of steadyBefore) expect(steadyAfter).toContain(id);
    const final = await booksMatchAccount(run, rg, names);
    expect(final['thrower']!.trades).toEqual([]);
  }, 90_000);
});

describe('a first portfolio start on an account that holds something is refused', () => {
  it.each([
    ['an open trade', { type: 'MARKET', instrument: 'EUR_USD', units: '1000' }],
    [
      'a pending order',
      { type: 'LIMIT', instrument: 'EUR_USD', units: '1000', price: '1.05000', timeInForce: 'GTC' },
    ],
  ])(
    '%s (nobody\'s in the books): exit non-zero naming the account and "portfolio", nothing sent',
    async (_what, order) => {
      r = await rig();
      const rg = r;
      await rg.rest.createOrder(rg.accountID, order as never);
      const dir = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-refused-'));
      const before = (await rg.rest.summary(rg.accountID)).lastTransactionID;
      const run = watch(spawnFxflowRun(rg.sandbox.url, LIVE_A, runArgs(rg, dir, [LIVE_B])));
      procs.push(run);
      const code = await run.exited;
      const said = output(run);
      console.log(
        `[portfolio run / refused] with ${_what}: exit ${code}: ${said
          .split('\n')
          .filter((l) => /portfolio/i.test(l))
          .join(' | ')}`,
      );
      expect(code).not.toBe(0);
      expect(said).toMatch(/portfolio/i);
      expect(said).toContain(rg.accountID);
      expect((await rg.rest.summary(rg.accountID)).lastTransactionID).toBe(before);
    },
    60_000,
  );
});

describe('fxflow run --portfolio p.json', () => {
  it('the same module twice under two names and other params: two books apart (tags, units), each == its tagged trades; a line per member at the stop', async () => {
    r = await rig();
    const rg = r;
    const names = ['fast', 'slow'];
    const feed = new Feed(rg.sandbox, BOTH);
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-portfolio-file-'));
    // Netting account, both long EUR_USD (neither reduces the other's trades): fast 1000 every 2nd
    // tick up to 2 trades, slow 3000 every 3rd up to 3 with a parked limit order.
    const file = portfolioFile(dir, [
      { module: LIVE_A, name: 'fast', params: { units: 1000, every: 2, max: 2, park: false } },
      { module: LIVE_A, name: 'slow', params: { units: 3000, every: 3, max: 3 } },
    ]);
    const start = (await rg.rest.summary(rg.accountID)).lastTransactionID;
    const run = await startFxflowRun(rg.sandbox, `--portfolio=${file}`, runArgs(rg, dir));
    procs.push(run);
    await drive(
      feed,
      async () => {
        const txs = await txsSince(rg, start);
        const held = await accountBooks(rg);
        return (
          opensOf(txs, 'fast').length >= 4 &&
          opensOf(txs, 'slow').length >= 4 &&
          (held['fast']?.trades.length ?? 0) >= 1 &&
          (held['slow']?.trades.length ?? 0) >= 2
        );
      },
      'fast and slow opened 4 trades each (and closed some)',
    );
    const books = await booksMatchAccount(run, rg, names);
    const txs = await txsSince(rg, start);
    const units = (n: string): string[] => [...new Set(opensOf(txs, n).map((t) => t.units ?? ''))];
    const parked = (await rg.rest.pendingOrders(rg.accountID)).map(
      (o) => (o as { clientExtensions?: { tag?: string } }).clientExtensions?.tag,
    );
    console.log(
      `[portfolio file] books == tagged trades: ${counts(books)}; opening units fast ${units('fast').join()}, slow ${units('slow').join()}; pending orders tagged ${parked.join()}`,
    );
    expect(tagProblems(txs, names)).toEqual([]);
    expect(units('fast')).toEqual(['1000']);
    expect(units('slow')).toEqual(['3000']);
    expect(books['fast']!.trades.every((t) => t.units === 1000)).toBe(true);
    expect(books['slow']!.trades.every((t) => t.units === 3000)).toBe(true);
    // (Not its trade count: live-a counts the trades in its book, not its market orders still in
    // flight, so on a busy machine it may open one more than `max` before a fill comes back.)
    expect(parked).toEqual(['slow']);
    const ids = new Set([...books['fast']!.trades, ...books['slow']!.trades].map((t) => t.id));
    expect(ids.size).toBe(books['fast']!.trades.length + books['slow']!.trades.length);

    run.proc.kill('SIGTERM');
    await until(() => run.proc.exitCode !== null, 'the run to exit after SIGTERM', 30_000);
    expect(await run.exited).toBe(0);
    for (const n of names) expect(run.out()).toMatch(memberLine(n));
  }, 90_000);
});
