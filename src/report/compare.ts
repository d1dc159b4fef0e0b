import { writeFileSync } from 'node:fs';
import { page } from './html.ts';
import type { Metric } from './metrics.ts';
import { ReportError, readRunFolder } from './run-folder.ts';
import { runModel } from './run-model.ts';

/** One run as the comparison page shows it. */
export interface CompareRun {
  readonly name: string;
  readonly dir: string;
  readonly strategy: string;
  readonly params: Record<string, unknown>;
  readonly currency: string;
  /** The run's period (RFC 3339) and the instruments it charted or traded. */
  readonly period: { from: string | null; to: string | null };
  readonly instruments: string[];
  readonly finalNAV: number;
  readonly netPL: number;
  readonly equity: { t: number[]; nav: number[] };
  readonly metrics: Metric[];
  readonly warnings: string[];
}

export interface CompareModel {
  readonly kind: 'compare';
  readonly runs: CompareRun[];
  /** What makes the runs not like for like (different periods, instruments): the page and the CLI say it. */
  readonly notes: string[];
}

/** Reads the run folders of a comparison (two or more). */
export function compareModel(dirs: readonly string[]): CompareModel {
  if (dirs.length < 2)
    throw new ReportError(
      `compare needs two run folders or more (got ${dirs.length}): fxflow compare runs/<a> runs/<b>`,
    );
  const runs = dirs.map((d) => {
    const m = runModel(readRunFolder(d));
    const instruments = [
      ...new Set([
        ...m.candles.map((c) => c.instrument),
        ...Object.keys((m.breakdown.byInstrument ?? {}) as object),
      ]),
    ].sort();
    return {
      name: m.name,
      dir: d,
      strategy: m.strategy,
      params: m.params,
      currency: m.currency,
      period: m.period,
      instruments,
      finalNAV: m.finalNAV,
      netPL: m.netPL,
      equity: { t: m.equity.t, nav: m.equity.nav },
      metrics: m.metrics,
      warnings: m.warnings,
    };
  });
  const ccys = new Set(runs.map((r) => r.currency));
  if (ccys.size > 1)
    for (const r of runs)
      r.warnings.push(
        `the runs are in different account currencies (${[...ccys].join(', ')}): money figures do not compare directly`,
      );
  const notes: string[] = [];
  const day = (t: string | null): string => (t === null ? '?' : t.slice(0, 10));
  const periods = new Set(runs.map((r) => `${day(r.period.from)} → ${day(r.period.to)}`));
  if (periods.size > 1)
    notes.push(
      `the runs cover different periods (${runs.map((r, i) => `${i + 1}: ${day(r.period.from)} → ${day(r.period.to)}`).join('; ')}): their returns and figures are not over the same market`,
    );
  const sets = new Set(runs.map((r) => r.instruments.join(',')));
  if (sets.size > 1)
    notes.push(
      `the runs trade different instruments (${runs.map((r, i) => `${i + 1}: ${r.instruments.join(', ') || 'none'}`).join('; ')})`,
    );
  return { kind: 'compare', runs, notes };
}

export function compareHtml(model: CompareModel): string {
  return page({
    title: `fxflow comparison · ${model.runs.map((r) => r.strategy).join(' vs ')}`,
    data: model,
    scripts: ['compare.js'],
  });
}

/** Writes the comparison page; returns its path, size and what makes the runs not like for like. */
export function writeCompare(
  dirs: readonly string[],
  out: string,
): { path: string; bytes: number; notes: string[] } {
  const model = compareModel(dirs);
  const html = compareHtml(model);
  writeFileSync(out, html);
  return { path: out, bytes: Buffer.byteLength(html), notes: model.notes };
}
