import { existsSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { SWEEP_CONFIG_FILE, trialCommand, type SweepDataSource } from '../research/trial-command.ts';
import { ReportError } from './run-folder.ts';

/** What a sweep folder holds (src/research/store.ts and sweep.ts write it). */
export type FolderKind = 'run' | 'sweep' | 'walkforward';

/** A walk-forward folder has walkforward.json (or windows.csv); a sweep folder has sweep.json; anything else is a run folder. */
export function folderKind(dir: string): FolderKind {
  if (existsSync(join(dir, 'walkforward.json')) || existsSync(join(dir, 'windows.csv'))) return 'walkforward';
  if (existsSync(join(dir, 'sweep.json'))) return 'sweep';
  return 'run';
}

type Value = string | number | boolean;

/** The trial figures the page shows (a subset of TrialMetrics, same names). */
export const TRIAL_FIGURES = [
  'netPL',
  'returnPct',
  'cagrPct',
  'sharpe',
  'sortino',
  'calmar',
  'profitFactor',
  'maxDrawdownPct',
  'trades',
  'winRate',
] as const;

export interface SweepTrialRow {
  readonly trial: number;
  readonly status: 'ok' | 'failed';
  readonly params: Record<string, Value>;
  readonly objective: number | null;
  /** TRIAL_FIGURES in order (null: not defined). */
  readonly figures: (number | null)[];
  readonly error?: string;
}

export interface SweepPageModel {
  readonly kind: 'sweep';
  readonly name: string;
  readonly strategy: string;
  readonly strategyFile: string | null;
  readonly search: string;
  readonly seed: number | null;
  readonly objective: string;
  /** Swept params with their declared values (sweep.json). */
  readonly dims: { name: string; values: Value[]; ordered: boolean }[];
  /** The params held fixed (defaults and --set values). */
  readonly fixed: Record<string, Value>;
  readonly constraints: string[];
  readonly period: { from: string | null; to: string | null };
  readonly currency: string;
  /** Trials the sweep was asked for (sweep.json) and the size of the space (summary.json). */
  readonly planned: number | null;
  readonly spaceSize: number | null;
  readonly figures: readonly string[];
  readonly trials: SweepTrialRow[];
  /** The best successful trial of the table (highest objective, lowest trial number on a tie). */
  readonly best: SweepTrialRow | null;
  /** The command that runs the best trial on its own, exactly (null: no best trial, or no strategy file recorded). */
  readonly bestCommand: string | null;
  readonly overfitting: {
    deflatedSharpe: {
      dsr: number;
      sharpe: number;
      expectedMaxSharpe: number;
      trials: number;
      skew: number;
      kurtosis: number;
      observations: number;
    } | null;
    pbo: {
      pbo: number;
      blocks: number;
      splits: number;
      medianLogit: number;
      search?: string;
      comparable?: boolean;
      label?: string;
    } | null;
    note?: string;
  } | null;
  readonly warnings: string[];
}

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ReportError(`${path}: ${(e as Error).message}`);
  }
}

const num = (x: unknown): number | null => (typeof x === 'number' && Number.isFinite(x) ? x : null);

/** Reads a sweep folder tolerantly: what is cut or missing becomes a warning on the page, not a failure. */
export function sweepModel(dir: string): SweepPageModel {
  const warnings: string[] = [];
  const metaPath = join(dir, 'sweep.json');
  if (!existsSync(metaPath))
    throw new ReportError(
      `${dir} is not a sweep folder (no sweep.json): give the folder \`fxflow optimize\` printed after "Saved in"`,
    );
  const meta = readJson(metaPath) as Record<string, unknown>;
  const dims = Array.isArray(meta.params)
    ? (meta.params as { name: string; values: Value[]; ordered: boolean }[]).filter(
        (d) => typeof d?.name === 'string' && Array.isArray(d.values),
      )
    : [];
  if (dims.length === 0)
    warnings.push('sweep.json lists no swept params ("params"): the heatmap needs at least one');
  const config = (meta.config ?? {}) as {
    run?: { from?: string; to?: string };
    account?: { currency?: string };
  };

  const trials: SweepTrialRow[] = [];
  const jsonl = join(dir, 'trials.jsonl');
  if (!existsSync(jsonl))
    warnings.push(
      'trials.jsonl is missing: no trial to show (the sweep wrote none yet, or the file was removed); rerun the same `fxflow optimize` command to run them',
    );
  else {
    const text = readFileSync(jsonl, 'utf8');
    const lines = text.split('\n');
    const bad: number[] = [];
    lines.forEach((line, i) => {
      if (line.trim() === '') return;
      let r: Record<string, unknown>;
      try {
        r = JSON.parse(line) as Record<string, unknown>;
      } catch {
        bad.push(i + 1);
        return;
      }
      if (
        typeof r.trial !== 'number' ||
        (r.status !== 'ok' && r.status !== 'failed') ||
        typeof r.params !== 'object' ||
        r.params === null
      ) {
        bad.push(i + 1);
        return;
      }
      const m = (r.metrics ?? {}) as Record<string, unknown>;
      trials.push({
        trial: r.trial,
        status: r.status,
        params: r.params as Record<string, Value>,
        objective: num(r.objective),
        figures: TRIAL_FIGURES.map((k) => num(m[k])),
        ...(typeof r.error === 'string' ? { error: r.error } : {}),
      });
    });
    if (bad.length > 0) {
      const cut = bad.length === 1 && bad[0] === lines.length - (text.endsWith('\n') ? 1 : 0);
      warnings.push(
        `trials.jsonl: ${bad.length === 1 ? `line ${bad[0]} is` : `lines ${bad.slice(0, 5).join(', ')}${bad.length > 5 ? ', …' : ''} are`} ${cut ? 'cut short (the sweep was stopped while writing it, or is still running)' : 'not a trial record (not JSON, or no trial/status/params)'}: ${bad.length === 1 ? 'that trial is' : 'those trials are'} missing from the table, the heatmap and the best trial. Rerun the same \`fxflow optimize\` command: it resumes the folder and runs only what is missing.`,
      );
    }
  }
  trials.sort((a, b) => a.trial - b.trial);

  const summaryPath = join(dir, 'summary.json');
  let overfitting: SweepPageModel['overfitting'] = null;
  let spaceSize: number | null = null;
  const planned = num(meta.trials);
  if (!existsSync(summaryPath))
    warnings.push(
      'summary.json is missing: the sweep has not finished (or was stopped), so the overfitting figures (deflated Sharpe, PBO) are not available; rerun the same `fxflow optimize` command to finish it',
    );
  else {
    const s = readJson(summaryPath) as {
      trials?: number;
      spaceSize?: number;
      overfitting?: SweepPageModel['overfitting'];
    };
    overfitting = s.overfitting ?? null;
    spaceSize = num(s.spaceSize);
    const expected = num(s.trials);
    if (expected !== null && expected !== trials.length)
      warnings.push(
        `summary.json counts ${expected} trials but trials.jsonl holds ${trials.length} readable ones: ${expected - trials.length} ${Math.abs(expected - trials.length) === 1 ? 'is' : 'are'} missing from this page`,
      );
  }

  let best: SweepTrialRow | null = null;
  for (const t of trials)
    if (t.status === 'ok' && t.objective !== null && (best === null || t.objective > best.objective!))
      best = t;
  return {
    kind: 'sweep',
    name: basename(dir),
    strategy: String(meta.strategy ?? '?'),
    strategyFile: typeof meta.strategyFile === 'string' ? meta.strategyFile : null,
    search: String(meta.search ?? '?'),
    seed: num(meta.seed),
    objective: String(meta.objective ?? 'objective'),
    dims,
    fixed: (meta.fixed ?? {}) as Record<string, Value>,
    constraints: Array.isArray(meta.constraints) ? (meta.constraints as string[]) : [],
    period: { from: config.run?.from ?? null, to: config.run?.to ?? null },
    currency: config.account?.currency ?? '',
    planned,
    spaceSize,
    figures: TRIAL_FIGURES,
    trials,
    best,
    bestCommand:
      // A member sweep's trial is a portfolio backtest: no one-strategy command runs it.
      best &&
      meta.portfolio === undefined &&
      typeof meta.strategyFile === 'string' &&
      existsSync(join(dir, SWEEP_CONFIG_FILE))
        ? trialCommand({
            dir,
            strategyFile: meta.strategyFile,
            data: meta.data as SweepDataSource | undefined,
            fixed: (meta.fixed ?? {}) as Record<string, Value>,
            params: best.params,
          })
        : null,
    overfitting,
    warnings,
  };
}

export interface WalkForwardWindowRow {
  readonly index: number;
  readonly trainFrom: number;
  readonly trainTo: number;
  readonly testFrom: number;
  readonly testTo: number;
  readonly params: Record<string, Value>;
  readonly isObjective: number | null;
  readonly oosObjective: number | null;
  readonly is: {
    netPL: number | null;
    cagrPct: number | null;
    sharpe: number | null;
    maxDrawdownPct: number | null;
    trades: number | null;
  } | null;
  readonly oos: {
    netPL: number | null;
    cagrPct: number | null;
    sharpe: number | null;
    maxDrawdownPct: number | null;
    trades: number | null;
  } | null;
  readonly efficiency: number | null;
  readonly dsr: number | null;
  readonly pbo: number | null;
  readonly error?: string;
  /** Daily returns the window adds to the stitched out-of-sample curve (null: an older walkforward.json without the count). */
  readonly oosDays: number | null;
  /** The window's sweep page, relative to the walk-forward folder. */
  readonly sweepPage: string;
}

export interface WalkForwardPageModel {
  readonly kind: 'walkforward';
  readonly name: string;
  readonly strategy: string;
  readonly objective: string;
  readonly currency: string;
  readonly windows: WalkForwardWindowRow[];
  /** The stitched out-of-sample NAV by time (epoch ms of the RFC 3339 times in walkforward.json). */
  readonly oosEquity: { time: number; nav: number }[];
  readonly oosReturnPct: number | null;
  readonly oosSharpe: number | null;
  readonly efficiency: number | null;
  readonly stability: Record<
    string,
    { values: Value[]; distinct: number; modeShare: number; cv: number | null }
  >;
  readonly warnings: string[];
}

const figs = (m: unknown): WalkForwardWindowRow['is'] => {
  if (!m || typeof m !== 'object') return null;
  const x = m as Record<string, unknown>;
  return {
    netPL: num(x.netPL),
    cagrPct: num(x.cagrPct),
    sharpe: num(x.sharpe),
    maxDrawdownPct: num(x.maxDrawdownPct),
    trades: num(x.trades),
  };
};

/** Reads a walk-forward folder (walkforward.json, and the strategy/objective from the first window's sweep.json). */
export function walkForwardModel(dir: string): WalkForwardPageModel {
  const path = join(dir, 'walkforward.json');
  if (!existsSync(path))
    throw new ReportError(
      `${path} is missing: the walk-forward has not finished; rerun the same \`fxflow walkforward\` command (it resumes window by window)`,
    );
  const doc = readJson(path) as {
    windows?: Record<string, unknown>[];
    oosEquity?: unknown[];
    oosReturnPct?: number;
    oosSharpe?: number | null;
    efficiency?: number | null;
    stability?: WalkForwardPageModel['stability'];
  };
  const warnings: string[] = [];
  if (!Array.isArray(doc.windows))
    throw new ReportError(`${path}: no "windows" list: the file is not what \`fxflow walkforward\` writes`);
  const windows: WalkForwardWindowRow[] = doc.windows.map((w, i) => {
    const win = (w.window ?? {}) as Record<string, number>;
    const folder =
      typeof w.sweepDir === 'string' ? basename(w.sweepDir) : `window-${String(i + 1).padStart(2, '0')}`;
    return {
      index: (num(win.index) ?? i) + 1,
      trainFrom: win.trainFrom!,
      trainTo: win.trainTo!,
      testFrom: win.testFrom!,
      testTo: win.testTo!,
      params: (w.params ?? {}) as Record<string, Value>,
      isObjective: num(w.isObjective),
      oosObjective: num(w.oosObjective),
      is: figs(w.inSample),
      oos: figs(w.outOfSample),
      efficiency: num(w.efficiency),
      dsr: num(w.dsr),
      pbo: num(w.pbo),
      ...(typeof w.error === 'string' ? { error: w.error } : {}),
      oosDays: num(w.oosDays) ?? (w.outOfSample ? null : 0),
      sweepPage: `${folder}/sweep.html`,
    };
  });
  for (const w of windows) if (w.error) warnings.push(`window ${w.index}: ${w.error}`);
  const first = join(dir, windows.length ? windows[0]!.sweepPage.split('/')[0]! : 'window-01', 'sweep.json');
  const meta = existsSync(first)
    ? (readJson(first) as {
        strategy?: string;
        objective?: string;
        config?: { account?: { currency?: string } };
      })
    : {};
  const raw = Array.isArray(doc.oosEquity) ? doc.oosEquity : [];
  const oosEquity: { time: number; nav: number }[] = [];
  for (const p of raw) {
    const x = p as { time?: unknown; nav?: unknown } | null;
    const time = typeof x?.time === 'string' ? Date.parse(x.time) : NaN;
    if (typeof x?.nav === 'number' && Number.isFinite(time)) oosEquity.push({ time, nav: x.nav });
  }
  if (raw.length > 0 && raw.every((x) => typeof x === 'number')) {
    warnings.push(
      `${path} is from an older fxflow (its "oosEquity" counts days, it has no dates): run the same \`fxflow walkforward\` command again to date it (the windows' sweeps are read back from their folders)`,
    );
  } else if (oosEquity.length < 2)
    warnings.push(
      'no out-of-sample returns were recorded (walkforward.json "oosEquity" has fewer than two dated points): the equity chart is empty',
    );
  return {
    kind: 'walkforward',
    name: basename(dir),
    strategy: meta.strategy ?? '?',
    objective: meta.objective ?? 'objective',
    currency: meta.config?.account?.currency ?? '',
    windows,
    oosEquity,
    oosReturnPct: num(doc.oosReturnPct),
    oosSharpe: num(doc.oosSharpe),
    efficiency: num(doc.efficiency),
    stability: doc.stability ?? {},
    warnings,
  };
}
