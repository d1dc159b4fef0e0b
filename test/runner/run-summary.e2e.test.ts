// A live run's own figures (summary.json, report.txt): the period is the run's first to last event
// or transaction, exposure is the share of it with a trade open (from the trades' open intervals),
// and nothing annualised is claimed for a run of seconds. Real `fxflow run` processes against the
// sandbox on its manual clock, stopped and started again on the same journal and run folder, with a
// trade left open across the restart.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { pricePath, rig, startFxflowRun, until, type FxflowRun, type Rig } from './harness.ts';

const STRATEGY = 'test/runner/replay-strategy.ts';
let r: Rig | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  run?.proc.kill('SIGKILL');
  run = undefined;
  await r?.close();
  r = undefined;
});

const path = pricePath(60);
/** The replay strategy decides on prices whose time in seconds is 2 mod 3 (one market order each). */
const decides = (t: number): boolean => Math.floor(t / 1000) % 3 === 2;

/** `fxflow run` over path[from..to): each decision's fill journaled before the next price. Stopped with SIGTERM. */
async function session(
  rr: Rig,
  journal: string,
  out: string,
  from: number,
  to: number,
  fills: number,
): Promise<number> {
  run = await startFxflowRun(rr.sandbox, STRATEGY, [
    '--journal',
    journal,
    '--out',
    out,
    '--log-file',
    join(journal, 'run.log'),
  ]);
  for (const p of path.slice(from, to)) {
    rr.sandbox.setTime(p.time);
    rr.sandbox.pushPrice(p);
    if (!decides(p.time)) continue;
    fills++;
    await until(async () => {
      const j = Journal.read(journal);
      const last = (await rr.rest.summary(rr.accountID)).lastTransactionID;
      return (
        j.transactions.filter((t) => t.type === 'ORDER_FILL').length === fills && j.lastTransactionID === last
      );
    }, `the fill of order ${fills}`);
  }
  run.proc.kill('SIGTERM');
  expect(await run.exited).toBe(0);
  run = undefined;
  return fills;
}

/** The share of [from, to] with a trade open, worked out from the fills themselves (trade opened / closed). */
function exposureFromFills(txs: readonly Transaction[], from: number, to: number): number {
  const open = new Map<string, number>();
  const spans: [number, number][] = [];
  for (const t of txs) {
    if (t.type !== 'ORDER_FILL') continue;
    const at = Date.parse(t.time);
    const f = t as unknown as {
      tradeOpened?: { tradeID: string };
      tradesClosed?: { tradeID: string }[];
      tradeReduced?: { tradeID: string };
    };
    for (const c of f.tradesClosed ?? []) {
      spans.push([open.get(c.tradeID)!, at]);
      open.delete(c.tradeID);
    }
    if (f.tradeOpened) open.set(f.tradeOpened.tradeID, at);
  }
  for (const a of open.values()) spans.push([a, to]);
  // The strategy holds one trade at a time: the intervals do not overlap.
  const covered = spans.reduce((n, [a, b]) => n + Math.max(0, Math.min(b, to) - Math.max(a, from)), 0);
  return Math.round((covered / (to - from)) * 10_000) / 100;
}

describe("fxflow run: the run folder's own figures", () => {
  it('after a restart with a trade open: period from the first fill (or before), exposure from the trades within 100%, no CAGR/Calmar', async () => {
    r = await rig();
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-summary-journal-'));
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-summary-')), 'live');
    // 27 prices: 9 decisions, so the first session stops long 1000; the second closes it and trades on.
    const first = await session(r, journal, out, 0, 27, 0);
    await session(r, journal, out, 27, 60, first);

    const summary = (
      JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as { summary: Record<string, unknown> }
    ).summary;
    const report = readFileSync(join(out, 'report.txt'), 'utf8');
    const txs = readFileSync(join(out, 'transactions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Transaction);
    const fills = txs.filter((t) => t.type === 'ORDER_FILL');
    const from = Date.parse(summary.from as string);
    const to = Date.parse(summary.to as string);
    const expected = exposureFromFills(txs, from, to);
    console.log(
      `[live summary] ${fills.length} fills from ${fills[0]!.time} to ${fills.at(-1)!.time}; summary period ${String(summary.from)} → ${String(summary.to)}; exposure ${String(summary.exposurePct)}% (from the fills: ${expected}%)`,
    );
    expect(fills).toHaveLength(20);
    // The period holds every transaction of the run, the trade opened in the first session included.
    expect(from).toBeLessThanOrEqual(Date.parse(fills[0]!.time));
    expect(to).toBeGreaterThanOrEqual(Date.parse(txs.at(-1)!.time));
    expect(to).toBeGreaterThanOrEqual(path[59]!.time);
    expect(summary.exposurePct).toBe(expected);
    // By hand: 10 trades held 3 s each (10:00:02-05, 08-11, ..., 56-59) over 10:00:02 → 10:00:59: 30 s of 57.
    expect(summary.exposurePct).toBe(52.63);
    expect(summary.exposurePct as number).toBeGreaterThan(0);
    expect(summary.exposurePct as number).toBeLessThanOrEqual(100);
    const esc = (x: unknown): string => String(x).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    expect(report).toMatch(new RegExp(`Period\\s+${esc(summary.from)} → ${esc(summary.to)}`));
    expect(report).toContain(`${(summary.exposurePct as number).toFixed(2)}%`);
    // Annualised figures over a run of seconds would extrapolate it to a year: not claimed.
    expect(Object.keys(summary).filter((k) => /cagr|calmar/i.test(k))).toEqual([]);
    expect(report).not.toMatch(/CAGR|Calmar/);
  }, 180_000);
});
