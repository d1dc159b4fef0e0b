import type { Logger } from 'pino';
import { AccountStateError } from '../../domain/account-state.ts';
import type { Account } from '../../domain/v20/index.ts';
import { type DriftBreach, DriftGuard } from '../recording/drift.ts';
import { ShadowBook } from '../recording/shadow.ts';
import { RunnerError } from './errors.ts';
import { simModels } from './fill-models.ts';
import type { RunnerOptions } from './runner-options.ts';
import { type Baseline, baselineOf } from './session.ts';

/**
 * The shadow set-up (`--shadow`): a simulator started from the account as it is now (its open
 * trades and pending orders), with the run's fill models, and with `--max-drift` the drift guard
 * comparing its fills with the account's. An account the simulator cannot hold is refused with the
 * way out (run without --shadow); trades in instruments it does not know are left out, with a warning.
 */
export function startShadow(
  o: RunnerOptions,
  baseline: Baseline,
  account: Account,
  onDrift: (b: DriftBreach) => void,
  log: Logger,
): { readonly shadow: ShadowBook; readonly drift: DriftGuard | undefined } {
  let shadow: ShadowBook;
  try {
    shadow = new ShadowBook({
      instruments: o.instruments,
      currency: baseline.currency,
      balance: baseline.balance,
      marginRate: baseline.marginRate,
      hedging: baseline.hedging,
      account: baselineOf(account),
      models: simModels(o.fill, baseline.currency),
    });
  } catch (e) {
    if (!(e instanceof AccountStateError)) throw e;
    throw new RunnerError(
      'RUNNER',
      `--shadow: the simulator cannot start from account ${o.accountID} as v20 reports it (${e.message}); run without --shadow`,
      { cause: e },
    );
  }
  let drift: DriftGuard | undefined;
  if (o.maxDrift !== undefined) {
    const guard = new DriftGuard(o.maxDrift, (i) => o.instruments.get(i).pip, onDrift);
    drift = guard;
    shadow.sim.transactions$.subscribe((t) => guard.sim(t));
  }
  if (shadow.leftOut.length > 0)
    log.warn(
      { leftOut: shadow.leftOut },
      'shadow simulator: trades and orders in instruments it does not know (data/instruments.json) are left out',
    );
  return { shadow, drift };
}
