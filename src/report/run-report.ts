import { join } from 'node:path';
import { page, writePage } from './html.ts';
import { packRun } from './pack.ts';
import { readRunFolder, type FoldedTransactions } from './run-folder.ts';
import { runModel, type RunModel } from './run-model.ts';

/** The report page of one run, as HTML. */
export function runReportHtml(model: RunModel): string {
  return page({
    title: runReportTitle(model),
    data: packRun(model),
    scripts: ['report.js'],
    zone: reportZone(model),
  });
}

/** The zone the run's config.json asks its report times in (report.timeZone); undefined: UTC. */
const reportZone = (model: RunModel): string | undefined => {
  const z = (model.config?.report as { timeZone?: unknown } | undefined)?.timeZone;
  return typeof z === 'string' ? z : undefined;
};

const runReportTitle = (model: RunModel): string =>
  `${model.strategy} · ${model.name} · ${model.live ? 'fxflow live run report' : 'fxflow report'}`;

/**
 * Reads a run folder and writes its report.html; returns the file's path and what the report says
 * is missing. `transactions`: the run's own fold of what it wrote to transactions.jsonl (a backtest
 * passes it; the file is then not parsed back).
 */
export function writeRunReport(
  dir: string,
  transactions?: FoldedTransactions,
): { path: string; warnings: string[]; bytes: number } {
  const rf = readRunFolder(dir, transactions);
  (globalThis as any).__mark?.('read folder');
  const model = runModel(rf);
  (globalThis as any).__mark?.('model');
  const path = join(dir, 'report.html');
  // Written piece by piece: the page is never one string in memory (see writePage).
  const bytes = writePage(path, {
    title: runReportTitle(model),
    data: packRun(model),
    scripts: ['report.js'],
    zone: reportZone(model),
  });
  return { path, warnings: model.warnings, bytes };
}
