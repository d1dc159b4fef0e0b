// Issue 18 item 4, bad input: a damaged recording is replayed as far as it goes, with a message
// naming the file and line; nothing recorded is changed. A real runner records against a real
// sandbox over HTTP; `fxflow replay` runs as a process on the damaged copies.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileSha256 } from '../../src/app/live-run-folder.ts';
import { replayRun, type Reconciliation } from '../../src/app/replay.ts';
import { InputRecorder } from '../../src/runner/recording/input-recorder.ts';
import { RecordingError } from '../../src/runner/recording/recording.ts';
import replayStrategy from './replay-strategy.ts';
import { pricePath, rig, settle, type Rig } from './harness.ts';

const ROOT = resolve(import.meta.dirname, '../..');
let r: Rig | undefined;
/** A good recording: 30 prices, 10 decisions, one session, in one input file. */
let good = '';
let strategyFile = '';

beforeAll(async () => {
  r = await rig();
  const tmp = mkdtempSync(join(tmpdir(), 'fxflow-bad-input-'));
  // The strategy from a copy, so one test can change it.
  strategyFile = join(tmp, 'replay-strategy.ts');
  writeFileSync(
    strategyFile,
    readFileSync(join(ROOT, 'test/runner/replay-strategy.ts'), 'utf8').replace(
      "'../../src/strategy/api.ts'",
      `'${join(ROOT, 'src/strategy/api.ts')}'`,
    ),
  );
  good = join(tmp, 'good');
  mkdirSync(good);
  const recorder = new InputRecorder({
    dir: good,
    meta: {
      fxflow: 'test',
      strategy: { file: strategyFile, name: 'replay-strategy', sha256: fileSha256(strategyFile) },
      params: replayStrategy.params,
      env: 'sandbox',
      accountID: r.accountID,
      broker: 'v20',
      subscriptions: { candles: [], ticks: ['EUR_USD'], signals: [], calendar: [] },
      config: {},
    },
  });
  const runner = r.runner({
    strategy: replayStrategy as never,
    name: 'replay-strategy',
    params: replayStrategy.params,
    recorder,
  });
  await runner.start();
  for (const p of pricePath(30)) {
    r.sandbox.setTime(p.time);
    r.sandbox.pushPrice(p);
    await settle(r, runner);
  }
  await runner.stop('end');
}, 60_000);
afterAll(async () => {
  await r?.close();
});

/** A copy of the good recording to damage. */
function copy(): string {
  const d = mkdtempSync(join(tmpdir(), 'fxflow-bad-copy-'));
  for (const f of readdirSync(good)) copyFileSync(join(good, f), join(d, f));
  return d;
}
const INPUT = 'inputs-000001.jsonl.gz';
const lines = (dir: string): string[] =>
  gunzipSync(readFileSync(join(dir, INPUT)))
    .toString('utf8')
    .split('\n')
    .filter((l) => l !== '');
const cli = (...args: string[]) =>
  spawnSync(process.execPath, ['bin/fxflow.js', 'replay', ...args], { cwd: ROOT, encoding: 'utf8' });

describe('fxflow replay: bad input', () => {
  it('the good recording replays with zero differences (the baseline of the tests below)', async () => {
    const rec = await replayRun({ dir: good });
    expect(rec.differences).toBe(0);
    expect(rec.decisions.live).toBe(10);
    expect(rec.problems).toEqual([]);
  });

  it('a torn last line: replayed up to it, the message names the file and line; the file is not changed', async () => {
    const d = copy();
    const all = lines(d);
    // Cut inside the 60th line (the rest of the file is lost, as when a run is killed mid-write).
    const cut = `${all.slice(0, 59).join('\n')}\n${all[59]!.slice(0, 25)}`;
    writeFileSync(join(d, INPUT), gzipSync(cut));
    const before = readFileSync(join(d, INPUT));
    const out = cli(d);
    const rec = JSON.parse(readFileSync(join(d, 'reconciliation.json'), 'utf8')) as Reconciliation;
    console.log(
      `[torn line] exit ${out.status}; ${out.stderr.trim()}; decisions live ${rec.decisions.live}, replay ${rec.decisions.replay}, differences ${rec.differences}`,
    );
    expect(out.status).toBe(0);
    expect(out.stderr).toContain(
      `${INPUT} line 60 is cut short (a run killed while writing, or a damaged file): replayed up to line 59`,
    );
    expect(rec.skipped.truncated).toBe(1);
    // Replayed up to line 59: the decisions in it, each compared.
    const intents = all.slice(0, 59).filter((l) => l.includes('"k":"intent"')).length;
    expect(rec.decisions.live).toBe(intents);
    expect(intents).toBeGreaterThan(3);
    expect(readFileSync(join(d, INPUT)).equals(before)).toBe(true);
  });

  it('a gzip file cut short (no end, half a block): what it holds is replayed, the file named', async () => {
    const d = copy();
    const bytes = readFileSync(join(d, INPUT));
    writeFileSync(join(d, INPUT), bytes.subarray(0, Math.floor(bytes.length * 0.6)));
    const rec = await replayRun({ dir: d });
    console.log(`[cut gzip] ${rec.problems.join(' | ')}; decisions live ${rec.decisions.live}`);
    expect(rec.skipped.truncated).toBe(1);
    // Where the cut lands in the compressed stream decides what the last whole line is (the recording
    // differs a little from run to run): a line cut short, damage after a line, or the record after
    // the last whole one missing. Each names the file and the line.
    const file = INPUT.replace(/\./g, '\\.');
    expect(rec.problems.join('\n')).toMatch(
      new RegExp(
        `${file} (line \\d+ is cut short|is damaged after line \\d+)|damaged from ${file} line \\d+ \\(record \\d+ missing`,
      ),
    );
    expect(rec.decisions.live).toBeGreaterThan(0);
    expect(rec.decisions.live).toBeLessThan(10);
  });

  it('an unknown event kind and a damaged line: each skipped and counted with its file and line; the rest replayed with zero differences', async () => {
    const d = copy();
    const all = lines(d);
    all.splice(
      5,
      0,
      '{"k":"orderbook","seq":0.5,"rt":0,"book":[]}',
      '{"k":"orderbook","seq":0.6,"rt":0,"book":[]}',
      'not json at all',
    );
    writeFileSync(join(d, INPUT), gzipSync(`${all.join('\n')}\n`));
    const rec = await replayRun({ dir: d });
    console.log(`[unknown kind] ${rec.problems.join(' | ')}`);
    expect(rec.skipped.unknownKind).toBe(2);
    expect(rec.skipped.damaged).toBe(1);
    expect(rec.problems).toContain(
      `${INPUT} line 6: unknown kind "orderbook", written by a newer fxflow or edited: skipped`,
    );
    expect(rec.problems).toContain(`${INPUT} line 8: not a JSON line (not json at all…): skipped`);
    expect(rec.differences).toBe(0);
  });

  it('a flipped byte mid-file (a tick line no longer JSON): "inputs damaged from line N: not compared past here", and no difference is made up from it', async () => {
    const d = copy();
    const all = lines(d);
    // A tick in the middle that a decision followed: without it, the replay would decide otherwise.
    const k = all.findIndex(
      (l, i) => i > all.length / 2 && l.includes('"k":"tick"') && (all[i + 1] ?? '').includes('"k":"intent"'),
    );
    all[k] = all[k]!.replace('"k":"tick"', '"k"#"tick"');
    writeFileSync(join(d, INPUT), gzipSync(`${all.join('\n')}\n`));
    const rec = await replayRun({ dir: d });
    console.log(
      `[flipped byte] ${rec.problems.join(' | ')}; decisions ${rec.decisions.live}/${rec.decisions.replay}, differences ${rec.differences}`,
    );
    expect(rec.skipped.damaged).toBe(1);
    expect(rec.damagedFrom).toMatchObject({ file: INPUT, line: k + 1 });
    expect(rec.problems[0]).toMatch(
      new RegExp(
        `^inputs damaged from ${INPUT.replace(/\./g, '\\.')} line ${k + 1} \\(record \\d+ missing, after [^)]+\\): not compared past here`,
      ),
    );
    // Everything before the damage agrees, and nothing after it is compared.
    expect(rec.differences).toBe(0);
    expect(rec.fills.compared).toBeGreaterThan(0);
    expect(rec.fills.compared).toBeLessThan(10);
  });

  it('an inputs file emptied to 0 bytes while run.json says its session held records: an error naming the file and the count', async () => {
    const d = copy();
    const held = (
      JSON.parse(readFileSync(join(d, 'run.json'), 'utf8')) as {
        sessions: { records: Record<string, number> }[];
      }
    ).sessions[0]!.records;
    writeFileSync(join(d, INPUT), '');
    const a = cli(d);
    expect(a.status).toBe(1);
    const total = Object.values(held).reduce((x, y) => x + y, 0);
    expect(a.stderr).toContain(
      `${INPUT} is empty (0 bytes), but ${join(d, 'run.json')} says session 1 held ${total} records (`,
    );
    expect(a.stderr).toContain(`${held.tick} tick, `);
    expect(a.stderr).not.toMatch(/\n\s+at /);
    await expectRecordingError(d);
  });

  it('a run folder without inputs, and a backtest folder: a clear message saying how to get one, exit 1', async () => {
    const d = copy();
    rmSync(join(d, INPUT));
    const a = cli(d);
    expect(a.status).toBe(1);
    expect(a.stderr).toContain(
      `${d} has run.json but no input files (inputs-*.jsonl.gz): ${INPUT} named in run.json are missing; nothing can be replayed. Record a run with \`fxflow run\``,
    );
    const bt = mkdtempSync(join(tmpdir(), 'fxflow-backtest-like-'));
    writeFileSync(join(bt, 'summary.json'), '{}');
    const b = cli(bt);
    expect(b.status).toBe(1);
    expect(b.stderr).toMatch(
      /has no run\.json: it is a backtest's run folder, which has no live inputs to replay; .*run the strategy with `fxflow run` to record one/,
    );
    expect(b.stderr).not.toMatch(/\n\s+at /); // no stack trace
    await expectRecordingError(d);
  });

  it('a recording from another account, and of another instrument set: named, the rest replayed', async () => {
    const d = copy();
    const meta = JSON.parse(readFileSync(join(d, 'run.json'), 'utf8')) as {
      accountID: string;
      subscriptions: { ticks: string[] };
    };
    const recorded = meta.accountID;
    meta.accountID = '101-001-9999999-001';
    meta.subscriptions.ticks = ['GBP_USD'];
    writeFileSync(join(d, 'run.json'), JSON.stringify(meta));
    const rec = await replayRun({ dir: d });
    console.log(`[other account] ${rec.problems.join(' | ')}`);
    expect(
      rec.problems.some(
        (p) =>
          p.includes(
            `is of account ${recorded}, the run's account is 101-001-9999999-001 (run.json): a recording from another account; skipped`,
          ) && p.startsWith(`${INPUT} line `),
      ),
    ).toBe(true);
    expect(rec.skipped.otherAccount).toBe(20);
    expect(rec.problems).toContain(
      `${join(d, 'run.json')}: the recording is of ticks GBP_USD; the strategy subscribes to ticks EUR_USD (ticks EUR_USD not recorded: no events for them). A recording of another instrument set: decisions will differ`,
    );
    // The decisions still replay (the prices are there); the account's fills are not the run's, so every fill differs.
    expect(rec.decisions.differ).toBe(0);
    expect(rec.fills.differ).toBe(10);
  });

  it('recorded prices pass the gate every price source passes: a price of another instrument, or prices in a closed market, refuse the replay naming the file and line', async () => {
    // A USD_JPY price recorded as EUR_USD.
    const d = copy();
    const all = lines(d);
    const k = all.findIndex((l) => l.includes('"k":"tick"'));
    const x = JSON.parse(all[k]!) as { t: number; b: number; a: number };
    all[k] = JSON.stringify({ ...x, b: 147.512, a: 147.515 });
    writeFileSync(join(d, INPUT), gzipSync(`${all.join('\n')}\n`));
    await expect(replayRun({ dir: d })).rejects.toThrow(
      `${join(d, INPUT)}:${k + 1} (price): EUR_USD trades between 0.7 and 1.8; this recording has 147.512 at ${new Date(x.t).toISOString()}: it is not a recording of EUR_USD (a recording of another instrument, or edited): record it again, or move the files to the folder of the instrument they hold`,
    );
    const out = cli(d);
    expect(out.status).toBe(1);
    expect(out.stderr.trim()).toMatch(
      new RegExp(`^fxflow: .*${INPUT}:${k + 1} \\(price\\): EUR_USD trades between`),
    );
    // The prices moved to a Saturday (three days back from Tuesday 2 January 2024).
    const e = copy();
    const moved = lines(e).map((l) => {
      if (!l.includes('"k":"tick"')) return l;
      const r = JSON.parse(l) as { t: number };
      return JSON.stringify({ ...r, t: r.t - 3 * 86_400_000 });
    });
    writeFileSync(join(e, INPUT), gzipSync(`${moved.join('\n')}\n`));
    await expect(replayRun({ dir: e })).rejects.toThrow(
      new RegExp(
        `^${e.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(time\\): 30 of its 30 prices fall while the EUR_USD market is closed \\(first: Sat 2023-12-30T10:00Z, .*\\): OANDA sends no price while the market is closed`,
      ),
    );
  });

  it('a changed strategy file: refused naming both hashes, unless --allow-changed-strategy (then a warning)', () => {
    const d = copy();
    const original = readFileSync(strategyFile, 'utf8');
    try {
      writeFileSync(strategyFile, `${original}\n// changed after the run\n`);
      const now = fileSha256(strategyFile);
      const recorded = (
        JSON.parse(readFileSync(join(d, 'run.json'), 'utf8')) as { strategy: { sha256: string } }
      ).strategy.sha256;
      const a = cli(d);
      expect(a.status).toBe(1);
      expect(a.stderr).toContain(`has changed since the run: sha256 ${now}, the run recorded ${recorded}`);
      expect(a.stderr).toContain('--allow-changed-strategy');
      const b = cli(d, '--allow-changed-strategy');
      expect(b.status).toBe(0);
      expect(b.stderr).toContain(
        `WARNING: the strategy file ${strategyFile} has changed since the run (sha256 ${now}, recorded ${recorded})`,
      );
    } finally {
      writeFileSync(strategyFile, original);
    }
  });
});

/** The library call throws RecordingError (a code the CLI prints as one message) for a folder with nothing to replay. */
async function expectRecordingError(d: string): Promise<void> {
  await expect(replayRun({ dir: d })).rejects.toBeInstanceOf(RecordingError);
}
