import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { page } from './html.ts';
import {
  sweepModel,
  walkForwardModel,
  type SweepPageModel,
  type WalkForwardPageModel,
} from './sweep-model.ts';

export function sweepHtml(model: SweepPageModel): string {
  return page({
    title: `${model.strategy} · sweep ${model.name} · fxflow`,
    data: model,
    scripts: ['sweep.js'],
    charts: false,
  });
}

export function walkForwardHtml(model: WalkForwardPageModel): string {
  return page({
    title: `${model.strategy} · walk-forward ${model.name} · fxflow`,
    data: model,
    scripts: ['sweep.js'],
  });
}

export interface PageWritten {
  readonly path: string;
  readonly bytes: number;
  readonly warnings: string[];
}

/** Reads a sweep folder and writes its sweep.html. */
export function writeSweepReport(dir: string): PageWritten {
  const model = sweepModel(dir);
  const html = sweepHtml(model);
  const path = join(dir, 'sweep.html');
  writeFileSync(path, html);
  return { path, bytes: Buffer.byteLength(html), warnings: model.warnings };
}

/** Reads a walk-forward folder and writes walkforward.html, and sweep.html in every window's sweep folder. */
export function writeWalkForwardReport(dir: string): PageWritten & { windowPages: PageWritten[] } {
  const model = walkForwardModel(dir);
  const windowPages: PageWritten[] = [];
  for (const w of model.windows) {
    const sub = join(dir, w.sweepPage.split('/')[0]!);
    if (existsSync(join(sub, 'sweep.json'))) windowPages.push(writeSweepReport(sub));
  }
  const html = walkForwardHtml(model);
  const path = join(dir, 'walkforward.html');
  writeFileSync(path, html);
  return { path, bytes: Buffer.byteLength(html), warnings: model.warnings, windowPages };
}
