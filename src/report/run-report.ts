import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { page } from './html.ts';
import { packRun } from './pack.ts';
import { readRunFolder } from './run-folder.ts';
import { runModel, type RunModel } from './run-model.ts';

/** The report page of one run, as HTML. */
export function runReportHtml(model: RunModel): string {
  return page({ title: `${model.strategy} · ${model.name} · fxflow report`, data: packRun(model), scripts: ['report.js'] });
}

/** Reads a run folder and writes its report.html; returns the file's path and what the report says is missing. */
export function writeRunReport(dir: string): { path: string; warnings: string[]; bytes: number } {
  const model = runModel(readRunFolder(dir));
  const html = runReportHtml(model);
  const path = join(dir, 'report.html');
  writeFileSync(path, html);
  return { path, warnings: model.warnings, bytes: Buffer.byteLength(html) };
}
