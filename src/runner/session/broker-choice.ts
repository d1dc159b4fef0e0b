// The broker a live run chose (`--broker sim` or the account), as the one assembly takes it.
import { AccountStateError } from '../../domain/account-state.ts';
import type { StreamStats } from '../../adapters/v20/stream.ts';
import { SimExecution } from '../../adapters/sim/sim-execution.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import { LedgerError } from '../../domain/ledger.ts';
import type { Journal, JournalContents, StateSnapshot } from '../order-path/journal.ts';
import { isRunnerIntent } from '../order-path/order-lifecycle.ts';
import type { BrokerChoice } from './assembly-contract.ts';
import { RunnerError } from './errors.ts';
import { simModels } from './fill-models.ts';
import type { RunnerOptions } from './runner-options.ts';
import type { Baseline } from './session.ts';

/** What the runner tells the broker it builds: its journal, stream figures, the halt, the "sent" mark. */
export interface BrokerHooks {
  readonly journal: Journal;
  readonly stats: StreamStats;
  readonly halted: () => boolean;
  readonly sent: (intent: OrderIntent) => void;
  /** `--broker sim`: the simulator's execution, once made. */
  readonly simExecution: (x: SimExecution) => void;
}

/**
 * The broker this run chose, for the assembly: `--broker sim`'s simulator (made by the one factory,
 * restored from the journal: its baseline plus every transaction it journaled, its trailing stop
 * levels; the simulator's own execution confirming each intent in the journal once its outcome
 * exists), or the account through the v20 send point (which asks the halt before every attempt and
 * marks each request sent in the journal).
 */
export function brokerChoice(
  o: RunnerOptions,
  broker: 'v20' | 'sim',
  at: {
    readonly baseline: Baseline;
    readonly deposit: string;
    readonly contents: JournalContents;
    readonly snap: StateSnapshot | undefined;
    readonly fromID: string;
  },
  h: BrokerHooks,
): BrokerChoice {
  const { baseline, deposit, contents, snap, fromID } = at;

  if (broker === 'sim')
    return {
      kind: 'sim',
      settings: {
        instruments: o.instruments,
        account: {
          currency: baseline.currency,
          balance: deposit,
          marginRate: baseline.marginRate,
          hedging: baseline.hedging,
          id: o.accountID,
        },
        models: simModels(o.fill, baseline.currency),
      },
      seed: (sim) => {
        // A restart: positions, pending orders, balance; its transaction IDs continue after the last one.
        if (contents.transactions.length === 0 && !(Number(baseline.lastTransactionID) > 0)) return;
        try {
          sim.seed(baseline, {
            transactions: contents.transactions,
            ...(snap?.trailing !== undefined ? { trailing: snap.trailing } : {}),
          });
        } catch (e) {
          if (!(e instanceof AccountStateError || e instanceof LedgerError)) throw e;
          throw new RunnerError(
            'RUNNER',
            `journal ${o.journalDir}: the simulated account cannot be restored from it (${e.message}); move the directory away to start the simulated account afresh`,
            { cause: e },
          );
        }
      },
      execution: (sim) => {
        const x = new SimExecution(sim, (id) => h.journal.confirm(id));
        h.simExecution(x);
        return x;
      },
    };
  return {
    kind: 'v20',
    options: {
      http: o.http,
      rest: o.rest,
      accountID: o.accountID,
      lastTransactionID: fromID,
      ...o.streams,
      stats: h.stats,
      ...(o.requestWindowMs !== undefined ? { requestWindowMs: o.requestWindowMs } : {}),
      ...(o.inDoubtMarginMs !== undefined ? { inDoubtMarginMs: o.inDoubtMarginMs } : {}),
      // The send point asks the halt before every attempt, a first sending and a resend alike.
      maySend: (intent) => !h.halted() || isRunnerIntent(intent),
      onSend: (intent, attempt) => {
        h.sent(intent);
        o.recorder?.attempt(intent.id, attempt, 'sent', Date.now());
      },
      onAttempt: (intent, attempt, what) => o.recorder?.attempt(intent.id, attempt, what, Date.now()),
    },
  };
}
