import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings fxflow applies to its own process at start (the CLI, and the benchmark's runs).
 *
 * `--no-allocation-site-pretenuring`: V8 watches which allocation sites make objects that survive
 * a young-generation collection and, past a threshold, allocates their objects straight in the old
 * generation. A backtest's first seconds fool that heuristic: a batch of candles and the orders of
 * open trades live just long enough, so candles and v20 transactions end up allocated old,
 * the old generation grows by megabytes between scavenges, every scavenge has to scan it, and full
 * collections follow. Which sites get pretenured depends on timing, so the same backtest ran in
 * either about 1.2 s or about 2.1 s (1M candles with TP/SL/trailing in batches of 4096, interleaved
 * runs); with pretenuring off it ran in 1.1-1.3 s every time. The catalog readers and the generator
 * now deliver batches small enough to die young, and with them the flag no longer changes the
 * benchmark or a catalog backtest; it stays as a guard for sources that deliver large batches.
 * See README, Performance.
 *
 * A flag set here acts from now on, for objects allocated from now on; it is set before fxflow's
 * own modules load. A user who names the setting in NODE_OPTIONS or on Node's command line keeps
 * theirs (`--allocation-site-pretenuring` turns V8's default back on).
 */
export const V8_FLAGS: readonly string[] = ['--no-allocation-site-pretenuring'];

/** The flags of V8_FLAGS that the user has not set themselves (in `execArgv` or `nodeOptions`). */
export function flagsToApply(execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = `${execArgv.join(' ')} ${nodeOptions ?? ''}`.replaceAll('_', '-');
  return V8_FLAGS.filter((f) => !given.includes(f.replace(/^--(no-)?/, '')));
}

/** Applies fxflow's V8 settings to this process; returns the flags it set. */
export function tuneV8(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): string[] {
  const flags = flagsToApply(execArgv, nodeOptions);
  for (const f of flags) setFlagsFromString(f);
  return flags;
}
