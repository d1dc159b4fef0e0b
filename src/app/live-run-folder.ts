import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Portfolio } from '../engine/portfolio.ts';
import type { Summary } from '../engine/report.ts';
import { InputRecorder, type InputRecorderOptions } from '../runner/recording/input-recorder.ts';
import type { RunMeta } from '../runner/recording/recording.ts';
import { writeRunReport } from '../report/run-report.ts';
import { equityCsv, tradesCsv } from './backtest.ts';
import { makeRunDir, RunFileError } from './line-file.ts';

/** The file in a journal directory naming the run folder its runs record into (a restart continues it). */
const POINTER = 'run-folder';

/** sha256 of a strategy file's bytes: run.json keeps it, `fxflow replay` checks it. */
export function fileSha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** A UTC stamp for folder names: 20250102T100000Z. */
const stamp = (t: number): string =>
  new Date(t)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');

/**
 * The run folder of `fxflow run`: `--out`, or the folder the journal's previous run recorded into
 * (a restart on the same journal continues it as a new session), or a new
 * `<runsDir>/live/<UTC stamp>-<strategy>-<env>/` (`-2`… when taken). Nothing is created here: the
 * folder and the journal's pointer to it are written when the recording starts, after the runner
 * holds the journal's lock (`openLiveRunFolder`), so a refused start leaves no trace. `--new-journal`
 * always starts a new folder.
 */
export function liveRunFolder(o: {
  out?: string;
  runsDir?: string;
  journalDir: string;
  newJournal: boolean;
  name: string;
  env: string;
  now?: number;
}): string {
  if (o.out !== undefined) return resolve(o.out);
  const pointer = join(o.journalDir, POINTER);
  if (!o.newJournal && existsSync(pointer)) {
    const dir = readFileSync(pointer, 'utf8').trim();
    if (dir !== '' && existsSync(join(dir, 'run.json'))) return dir;
  }
  const base = resolve(o.runsDir ?? 'runs', 'live', `${stamp(o.now ?? Date.now())}-${o.name}-${o.env}`);
  for (let n = 1; ; n++) {
    const dir = n === 1 ? base : `${base}-${n}`;
    if (!existsSync(dir) || n > 1000) return dir;
  }
}

/**
 * The recorder of run folder `dir`. Nothing is written until the runner starts the recording (it
 * does so once it holds the journal's lock and has checked the journal): then the folder is created
 * when new (exclusively: a folder another run took in the same second is refused, naming it) and
 * the journal directory remembers it (`run-folder`), so a restart continues it.
 */
export function openLiveRunFolder(
  dir: string,
  journalDir: string,
  o: Omit<InputRecorderOptions, 'dir' | 'prepare'>,
): InputRecorder {
  return new InputRecorder({
    ...o,
    dir,
    prepare: () => {
      if (!existsSync(dir)) {
        makeRunDir(dirname(dir));
        try {
          mkdirSync(dir);
        } catch (e) {
          throw new RunFileError(dir, e);
        }
      }
      makeRunDir(journalDir);
      writeFileSync(join(journalDir, POINTER), `${dir}\n`);
    },
  });
}

/**
 * After a stop: the report files a backtest's run folder has, where they fit a live run:
 * report.txt, summary.json, trades.csv (closed trades, then those open at the stop), equity.csv,
 * config.json and report.html (transactions.jsonl is written as they come, by the recorder).
 * Returns what could not be written (the recording itself is never touched).
 */
export async function finishLiveRunFolder(
  dir: string,
  o: { report: string; summary: Summary; portfolio: Portfolio; currency: string; meta: RunMeta },
): Promise<string[]> {
  const warnings: string[] = [];
  const attempt = (what: string, fn: () => void): void => {
    try {
      fn();
    } catch (e) {
      warnings.push(`${what}: ${(e as Error).message}`);
    }
  };
  attempt('report.txt', () => writeFileSync(join(dir, 'report.txt'), `${o.report}\n`));
  attempt('summary.json', () =>
    writeFileSync(
      join(dir, 'summary.json'),
      `${JSON.stringify({ strategy: o.meta.strategy.name, params: o.meta.params, summary: o.summary, live: { env: o.meta.env, accountID: o.meta.accountID, broker: o.meta.broker, sessions: o.meta.sessions.length } }, null, 2)}\n`,
    ),
  );
  attempt('trades.csv', () =>
    writeFileSync(join(dir, 'trades.csv'), tradesCsv(o.portfolio.closedTrades, o.portfolio.openAtEnd())),
  );
  attempt('equity.csv', () =>
    writeFileSync(join(dir, 'equity.csv'), equityCsv(o.portfolio.equity, o.currency)),
  );
  attempt('config.json', () =>
    writeFileSync(join(dir, 'config.json'), `${JSON.stringify(o.meta.config, null, 2)}\n`),
  );
  attempt('report.html', () => void writeRunReport(dir));
  return warnings;
}
