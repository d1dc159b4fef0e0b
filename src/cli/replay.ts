import { resolve } from 'node:path';
import type { Argv } from 'yargs';
import { makeRunDir } from '../app/line-file.ts';
import { SIM_COST_FLAGS, SIM_FILL_FLAGS } from './sim-flags.ts';

/** The flags of `fxflow replay`. */
export interface ReplayArgs {
  run: string;
  out?: string;
  strategy?: string;
  allowChangedStrategy?: boolean;
  fill?: 'current' | 'next';
  timeTolerance: number;
  failOnDiff?: boolean;
  marketHours?: boolean;
  slippage?: string;
  latency?: string;
  commission?: string;
}

/** A replay that found differences with --fail-on-diff (exit 1, for CI). */
export class ReplayDiffError extends Error {
  readonly code = 'REPLAY_DIFF' as const;
}

/** Declares the options of `fxflow replay`. */
export function replayCommand(y: Argv): Argv<ReplayArgs> {
  return (
    y
      .positional('run', {
        type: 'string',
        demandOption: true,
        describe: 'A live run folder (what fxflow run writes under runs/live/)',
      })
      .option('out', {
        type: 'string',
        describe: 'Folder for reconciliation.json and reconciliation.txt (default: the run folder)',
      })
      .option('strategy', {
        type: 'string',
        describe: 'The strategy file, if not where run.json says (its hash is still checked)',
      })
      .option('allow-changed-strategy', {
        type: 'boolean',
        describe:
          'Replay even when the strategy file differs from the one that ran (a warning names both hashes)',
      })
      .option('fill', {
        type: 'string',
        choices: ['current', 'next'],
        describe:
          'The simulator fills market orders at the price current when decided (default for runs against an account, as OANDA fills an order that reaches it at once) or at the next recorded price (as a backtest; default for --broker sim runs)',
      })
      .option('time-tolerance', {
        type: 'number',
        default: 1000,
        describe:
          'Milliseconds of wall time: a live fill the runner received later than this after its decision is late, and fill times further apart differ (a fill received within it may be as far apart in market time as the account took: a sandbox at --speed 60 runs 60 times faster)',
      })
      .option('fail-on-diff', {
        type: 'boolean',
        describe: 'Exit 1 when the reconciliation finds any difference (for CI)',
      })
      // The simulator's fill flags as backtest takes them (sim-flags.ts), over the run's recorded models.
      .options({
        'market-hours': SIM_FILL_FLAGS['market-hours'],
        slippage: SIM_FILL_FLAGS.slippage,
        latency: SIM_FILL_FLAGS.latency,
        commission: SIM_COST_FLAGS.commission,
      })
      .example(
        '$0 replay runs/live/20250102T100000Z-sma-cross-practice',
        'Replays a live run through the simulator and reconciles the two',
      ) as unknown as Argv<ReplayArgs>
  );
}

/** `fxflow replay <run-folder>`: prints a short summary; the full reconciliation goes to files. */
export async function runReplay(a: ReplayArgs): Promise<void> {
  const { replayRun, writeReconciliation, ReplayError } = await import('../app/replay.ts');
  if (!(Number.isFinite(a.timeTolerance) && a.timeTolerance >= 0))
    throw new ReplayError(
      `--time-tolerance must be a number of milliseconds >= 0 (got ${a.timeTolerance}); e.g. --time-tolerance 1000`,
    );
  const models = {
    ...(a.marketHours !== undefined ? { marketHours: a.marketHours } : {}),
    ...(a.slippage !== undefined ? { slippage: a.slippage } : {}),
    ...(a.latency !== undefined ? { latency: a.latency } : {}),
    ...(a.commission !== undefined ? { commission: a.commission } : {}),
  };
  const r = await replayRun({
    ...(Object.keys(models).length > 0 ? { models } : {}),
    dir: a.run,
    ...(a.strategy !== undefined ? { strategy: a.strategy } : {}),
    ...(a.allowChangedStrategy === true ? { allowChangedStrategy: true } : {}),
    ...(a.fill !== undefined ? { fill: a.fill } : {}),
    toleranceMs: a.timeTolerance,
  });
  const out = resolve(a.out ?? a.run);
  makeRunDir(out);
  const files = writeReconciliation(r, out);
  for (const p of r.problems) process.stderr.write(`fxflow replay: ${p}\n`);
  const causes = Object.entries(r.fills.byCause)
    .map(([c, n]) => `${c} ${n}`)
    .join(', ');
  process.stdout.write(
    `replayed ${r.sessions} session${r.sessions === 1 ? '' : 's'}: ${r.records.ticks} ticks, ${r.records.candles} candles, ${r.records.labs} labs events, ${r.records.transactions} transactions, ${r.records.intents} intents\n` +
      r.cuts.map((c) => `${c}\n`).join('') +
      `decisions: live ${r.decisions.live}, replay ${r.decisions.replay}, differ ${r.decisions.differ}${r.decisions.firstParting ? ` (first parting at decision ${r.decisions.firstParting.index + 1}, after ${r.decisions.firstParting.live?.after?.where ?? r.decisions.firstParting.replay?.after?.where ?? '?'})` : ''}\n` +
      `fills: ${r.fills.compared} compared, ${r.fills.differ} differ${causes ? ` (${causes})` : ''}\n` +
      `money: realized P/L live ${r.money.live.realizedPL} vs replay ${r.money.replay.realizedPL}, financing ${r.money.live.financing} vs ${r.money.replay.financing}\n` +
      `${r.differences === 0 ? 'no differences' : `${r.differences} differences`}; reconciliation in ${files.txt} and ${files.json}\n`,
  );
  if (a.failOnDiff === true && r.differences > 0)
    throw new ReplayDiffError(
      `the replay differs from the live run in ${r.differences} places (--fail-on-diff); see ${files.txt}`,
    );
}
