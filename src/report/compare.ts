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
  readonly finalNAV: number;
  readonly netPL: number;
  readonly equity: { t: number[]; nav: number[] };
  readonly metrics: Metric[];
  readonly warnings: string[];
}

export interface CompareModel {
  readonly kind: 'compare';
  readonly runs: CompareRun[];
}

/** Reads the run folders of a comparison (two or more). */
export function compareModel(dirs: readonly string[]): CompareModel {
  if (dirs.length < 2) throw new ReportError(`compare needs two run folders or more (got ${dirs.length}): fxflow compare runs/<a> runs/<b>`);
  const runs = dirs.map((d) => {
    const m = runModel(readRunFolder(d));
    return { name: m.name, dir: d, strategy: m.strategy, params: m.params, currency: m.currency, finalNAV: m.finalNAV, netPL: m.netPL, equity: { t: m.equity.t, nav: m.equity.nav }, metrics: m.metrics, warnings: m.warnings };
  });
  const ccys = new Set(runs.map((r) => r.currency));
  if (ccys.size > 1) for (const r of runs) r.warnings.push(`the runs are in different account currencies (${[...ccys].join(', ')}): money figures do not compare directly`);
  return { kind: 'compare', runs };
}

export function compareHtml(model: CompareModel): string {
  return page({ title: `fxflow comparison · ${model.runs.map((r) => r.strategy).join(' vs ')}`, data: model, scripts: ['compare.js'] });
}

/** Writes the comparison page; returns its path and size. */
export function writeCompare(dirs: readonly string[], out: string): { path: string; bytes: number } {
  const html = compareHtml(compareModel(dirs));
  writeFileSync(out, html);
  return { path: out, bytes: Buffer.byteLength(html) };
}
