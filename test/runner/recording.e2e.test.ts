// Issue 18 item 4: a live run keeps its inputs in its run folder (run.json, gzip JSON lines in
// arrival order). A runner against a real sandbox over HTTP, real files read back.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fileSha256 } from '../../src/app/live-run-folder.ts';
import { replayRun } from '../../src/app/replay.ts';
import { InputRecorder } from '../../src/runner/recording/input-recorder.ts';
import replayCandles from './replay-candle-strategy.ts';
import replayStrategy from './replay-strategy.ts';
import replayLabs from './replay-labs-strategy.ts';
import replaySpreadCot from './replay-spread-cot-strategy.ts';
import { V20Labs } from '../../src/adapters/v20/labs.ts';
import {
  inputFiles,
  readInputs,
  readRunMeta,
  type InputRecord,
} from '../../src/runner/recording/recording.ts';
import { pricePath, rig, settle, until, type Rig } from './harness.ts';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const meta = (accountID: string) => ({
  fxflow: 'test',
  strategy: { file: 'test/runner/ping-pong-strategy.ts', name: 'ping-pong', sha256: 'x' },
  params: { every: 3, units: '1000' },
  env: 'sandbox',
  accountID,
  broker: 'v20' as const,
  subscriptions: { candles: [], ticks: ['EUR_USD'], signals: [], calendar: [] },
  config: {},
});

describe('the run folder keeps the inputs', () => {
  it('ticks, transactions and intents in arrival order, each intent after the event it followed; a restart is a second session', async () => {
    r = await rig();
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-live-'));
    const path = pricePath(24);
    for (let session = 0; session < 2; session++) {
      const recorder = new InputRecorder({ dir, meta: meta(r.accountID), rotateBytes: 2000 });
      const runner = r.runner({ recorder });
      await runner.start();
      for (const p of path.slice(session * 12, session * 12 + 12)) {
        r.sandbox.setTime(p.time);
        r.sandbox.pushPrice(p);
        await settle(r, runner);
      }
      await runner.stop('end');
    }
    const m = readRunMeta(dir);
    const recs: InputRecord[] = [];
    const problems = await readInputs(dir, inputFiles(dir, m).files, (rec) => recs.push(rec));
    const kinds = (k: string): number => recs.filter((x) => x.k === k).length;
    // transactions.jsonl: the account's transactions of both sessions, each once, in ID order.
    const written = readFileSync(join(dir, 'transactions.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id);
    const received = [...new Set(recs.flatMap((x) => (x.k === 'tx' ? [x.tx.id] : [])))];
    expect(written).toEqual(received);
    expect(written.map(Number)).toEqual([...written.map(Number)].sort((a, b) => a - b));
    console.log(
      `[recording] ${m.sessions.length} sessions, files ${m.sessions.map((s) => s.files.length).join('+')}, records: ${kinds('tick')} ticks, ${kinds('tx')} transactions, ${kinds('intent')} intents, ${kinds('session')} session markers`,
    );
    expect(problems.messages).toEqual([]);
    expect(m.sessions).toHaveLength(2);
    expect(m.sessions[1]!.firstSeq).toBe(m.sessions[0]!.lastSeq! + 1);
    expect(m.sessions[0]!.files.length).toBeGreaterThan(1); // rotated at 2000 bytes
    expect(recs.map((x) => x.seq)).toEqual(recs.map((_, i) => i + 1));
    expect(kinds('session')).toBe(4);
    const ticks = recs.filter((x) => x.k === 'tick' && x.t >= path[0]!.time);
    expect(ticks.map((x) => (x as { t: number }).t)).toEqual(path.map((p) => p.time));
    expect(kinds('intent')).toBe(8);
    // Every intent follows a tick (ping-pong decides on ticks), and its market order's fill comes after it.
    for (const x of recs) {
      if (x.k !== 'intent') continue;
      const ev = recs.find((y) => y.seq === x.after)!;
      expect(ev.k).toBe('tick');
      const fill = recs.find(
        (y) =>
          y.k === 'tx' &&
          y.tx.type === 'ORDER_FILL' &&
          (y.tx as { clientOrderID?: string }).clientOrderID === x.intent.id,
      );
      expect(fill!.seq).toBeGreaterThan(x.seq);
    }
  }, 60_000);

  it('candles built from ticks: each recorded with the price that completed it (delivered before that price), and replayed with zero differences', async () => {
    r = await rig();
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-live-candles-'));
    const file = 'test/runner/replay-candle-strategy.ts';
    const recorder = new InputRecorder({
      dir,
      meta: {
        ...meta(r.accountID),
        strategy: { file, name: 'replay-candles', sha256: fileSha256(file) },
        params: replayCandles.params,
        subscriptions: { candles: ['EUR_USD:M1'], ticks: [], signals: [], calendar: [] },
      },
    });
    const runner = r.runner({
      strategy: replayCandles as never,
      name: 'replay-candles',
      params: replayCandles.params,
      recorder,
      candles: 'ticks',
    });
    await runner.start();
    // A price every 20 s for 10 minutes: 9 complete M1 candles, each completed by the first price after it.
    const path = pricePath(30).map((p, i) => ({ ...p, time: Date.UTC(2024, 0, 2, 10, 0, 10) + i * 20_000 }));
    for (const p of path) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    await runner.stop('end');
    const recs: InputRecord[] = [];
    await readInputs(dir, inputFiles(dir, readRunMeta(dir)).files, (x) => recs.push(x));
    const candles = recs.filter((x) => x.k === 'candle');
    expect(candles).toHaveLength(9);
    for (const c of candles) {
      // The next price recorded (after the candle's intent) is the one that completed it, and the candle names it.
      const next = recs.slice(recs.indexOf(c) + 1).find((x) => x.k === 'tick')!;
      expect(recs[recs.indexOf(c) + 1]!.k).toBe('intent');
      expect(c.k === 'candle' && c.src).toBe('ticks');
      expect(c.k === 'candle' && c.px?.t).toBe(next.k === 'tick' ? next.t : -1);
    }
    const rec = await replayRun({ dir });
    console.log(
      `[recording candles] ${candles.length} candles from ticks, ${rec.decisions.live} decisions; replay: ${rec.differences} differences, realized P/L ${rec.money.live.realizedPL} / ${rec.money.replay.realizedPL}`,
    );
    expect(rec.decisions).toMatchObject({ live: 9, replay: 9, differ: 0 });
    expect(rec.fills).toMatchObject({ compared: 9, differ: 0 });
    expect(rec.differences).toBe(0);
  }, 60_000);

  it("a risk refusal (the risk layer's own reject, never at the account) is recorded, and the replay, under the recorded limits, refuses the same: zero differences", async () => {
    r = await rig();
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-live-risk-'));
    const file = 'test/runner/replay-strategy.ts';
    const limits = { maxUnits: 1500 };
    const recorder = new InputRecorder({
      dir,
      meta: {
        ...meta(r.accountID),
        strategy: { file, name: 'replay-strategy', sha256: fileSha256(file) },
        params: { units: '2000' },
        config: { limits },
      },
    });
    // 2000 units against a limit of 1500: every entry refused.
    const runner = r.runner({
      strategy: replayStrategy as never,
      name: 'replay-strategy',
      params: { units: '2000' },
      recorder,
      limits,
    });
    await runner.start();
    for (const p of pricePath(12)) {
      r.sandbox.setTime(p.time);
      r.sandbox.pushPrice(p);
      await settle(r, runner);
    }
    await runner.stop('end');
    const rec = await replayRun({ dir });
    console.log(
      `[recording risk] ${rec.records.intents} intents, ${rec.records.transactions} transactions recorded (the refusals); replay: ${rec.differences} differences`,
    );
    expect(rec.records.intents).toBe(4);
    expect(rec.records.transactions).toBe(4);
    expect(rec.fills).toMatchObject({ compared: 4, differ: 0 });
    expect(rec.differences).toBe(0);
    expect(readFileSync(join(dir, 'transactions.jsonl'), 'utf8')).toBe('');
  }, 60_000);

  it('labs events as delivered (calendar, signals): recorded, and each decision on one replayed after the same record: zero differences', async () => {
    r = await rig({ clock: 'manual', start: Date.UTC(2024, 0, 2, 12) });
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-live-labs-'));
    const file = 'test/runner/replay-labs-strategy.ts';
    const recorder = new InputRecorder({
      dir,
      meta: {
        ...meta(r.accountID),
        strategy: { file, name: 'replay-labs', sha256: fileSha256(file) },
        params: {},
        subscriptions: { candles: [], ticks: ['EUR_USD'], signals: ['EUR_USD'], calendar: ['USD', 'EUR'] },
      },
    });
    r.sandbox.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.10015 });
    const runner = r.runner({
      strategy: replayLabs as never,
      name: 'replay-labs',
      params: {},
      recorder,
      labs: new V20Labs(r.http),
      labsPoll: { every: { calendar: 30, signals: 30 }, tickMs: 20 },
    });
    await runner.start();
    await until(
      () => runner.ticks > 0 && runner.labsPoller!.stats.polls >= 4 && runner.labsPoller!.stats.items > 0,
      'a price and labs events',
    );
    await settle(r, runner);
    await runner.stop('end');
    const rec = await replayRun({ dir });
    console.log(
      `[recording labs] ${rec.records.labs} labs events, ${rec.decisions.live} decisions; replay: ${rec.differences} differences`,
    );
    expect(rec.records.labs).toBeGreaterThan(0);
    expect(rec.decisions.live).toBe(rec.records.labs);
    expect(rec.decisions).toMatchObject({ replay: rec.records.labs, differ: 0 });
    expect(rec.fills).toMatchObject({ compared: rec.records.labs, differ: 0 });
    expect(rec.differences).toBe(0);
  }, 60_000);

  it('labs spreads and COT as delivered: recorded with the subscriptions in run.json, and each decision on one replayed after the same record: zero differences', async () => {
    r = await rig({ clock: 'manual', start: Date.UTC(2024, 0, 2, 12) });
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-live-spread-cot-'));
    const file = 'test/runner/replay-spread-cot-strategy.ts';
    const recorder = new InputRecorder({
      dir,
      meta: {
        ...meta(r.accountID),
        strategy: { file, name: 'replay-spread-cot', sha256: fileSha256(file) },
        params: {},
        subscriptions: {
          candles: [],
          ticks: ['EUR_USD'],
          signals: [],
          calendar: [],
          spreads: ['EUR_USD'],
          cot: ['EUR_USD'],
        },
      },
    });
    r.sandbox.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.10015 });
    const runner = r.runner({
      strategy: replaySpreadCot as never,
      name: 'replay-spread-cot',
      params: {},
      recorder,
      labs: new V20Labs(r.http),
      labsPoll: { every: { spreads: 30, cot: 30 }, tickMs: 20 },
    });
    await runner.start();
    await until(
      () => runner.ticks > 0 && runner.labsPoller!.stats.polls >= 4 && runner.labsPoller!.stats.items > 0,
      'a price and labs events',
    );
    await settle(r, runner);
    await runner.stop('end');
    const recs: InputRecord[] = [];
    await readInputs(dir, inputFiles(dir, readRunMeta(dir)).files, (x) => recs.push(x));
    const kinds = new Set(recs.flatMap((x) => (x.k === 'labs' ? [x.e.kind] : [])));
    expect([...kinds].sort()).toEqual(['cot', 'spread']);
    const rec = await replayRun({ dir });
    expect(rec.records.labs).toBeGreaterThan(0);
    expect(rec.decisions.live).toBe(rec.records.labs);
    expect(rec.decisions).toMatchObject({ replay: rec.records.labs, differ: 0 });
    expect(rec.differences).toBe(0);
  }, 60_000);
});
