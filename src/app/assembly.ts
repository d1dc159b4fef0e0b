import type { Observable } from 'rxjs';
import type { SimBroker } from '../adapters/sim/broker.ts';
import { simBroker } from '../adapters/sim/factory.ts';
import type { V20Execution } from '../adapters/v20/execution.ts';
import type { MarketEvent } from '../domain/events.ts';
import { Engine } from '../engine/engine.ts';
import { activeLimits, RiskExecution } from '../engine/risk.ts';
import type { Execution } from '../ports/execution.ts';
import type { Params } from '../strategy/api.ts';
import type {
  Assembly,
  AssemblyMode,
  AssemblyOptions,
  BrokerChoice,
  Driven,
} from '../runner/session/assembly-contract.ts';

export type {
  Assemble,
  Assembly,
  AssemblyMode,
  AssemblyOptions,
  BrokerChoice,
  Driven,
  RiskSettings,
  StrategyEntry,
} from '../runner/session/assembly-contract.ts';

/** The modes that may run without a risk gate when no limit is set (it would refuse nothing). */
const GATE_WHEN_LIMITED: ReadonlySet<AssemblyMode> = new Set(['backtest', 'optimize', 'walkforward']);

/** Who is told of each assembly built (tests: every mode goes through this one place). */
const watchers = new Set<(mode: AssemblyMode, a: Assembly) => void>();

/** Calls `watcher` with every assembly built from now on; returns the function that stops it. */
export function watchAssemblies(watcher: (mode: AssemblyMode, a: Assembly) => void): () => void {
  watchers.add(watcher);
  return () => watchers.delete(watcher);
}

/**
 * The one assembly of every mode: the broker (a simulator from the one factory, or the v20 send
 * point), the portfolio, the order path between the gate and the broker (live: the journal), the
 * risk gate, and the engine over them, with the one way to drive it (`feed`). Backtests, a sweep's
 * trials, walk-forward folds, replay, `run --broker sim`, `--shadow` and live runs are built here;
 * they differ in what they feed (their data source), their clock and their broker choice.
 */
export async function assemble(o: AssemblyOptions): Promise<Assembly> {
  if (o.host === undefined ? o.strategies.length !== 1 : o.strategies.length !== 0)
    throw new RangeError(
      `an assembly runs one strategy entry, or a portfolio's host and no entry (got ${o.strategies.length} entries${o.host ? ' and a host' : ''})`,
    );
  const { broker, sim, v20 } = await brokerOf(o.broker);
  const portfolio = o.portfolio(sim);
  const inner = o.orderPath !== undefined ? o.orderPath(broker) : broker;
  const limits = GATE_WHEN_LIMITED.has(o.mode) ? activeLimits(o.risk.limits) : o.risk.limits;
  const risk =
    GATE_WHEN_LIMITED.has(o.mode) && Object.keys(limits).length === 0
      ? undefined
      : new RiskExecution({
          inner,
          limits,
          portfolio,
          instruments: o.instruments,
          clock: o.clock,
          accountID: o.risk.accountID ?? sim?.accountID ?? '',
          ...(o.risk.hedging !== undefined ? { hedging: o.risk.hedging } : {}),
          ...(o.risk.log !== undefined ? { log: o.risk.log } : {}),
          ...(o.risk.lastTransactionID !== undefined || sim !== undefined
            ? { lastTransactionID: o.risk.lastTransactionID ?? sim!.ledger.lastTransactionID }
            : {}),
          ...(o.risk.onReject !== undefined ? { onReject: o.risk.onReject } : {}),
          ...(o.risk.keepBreaches !== undefined ? { keepBreaches: o.risk.keepBreaches } : {}),
        });
  const execution = risk ?? inner;
  const entry = o.strategies[0];
  const engine =
    entry === undefined
      ? undefined
      : new Engine<Params, unknown>({
          strategy: entry.strategy,
          name: entry.name,
          params: entry.params,
          execution,
          portfolio,
          instruments: o.instruments,
          clock: o.clock,
          log: o.log,
          marginRate: o.marginRate,
          ...(o.onIntent !== undefined ? { onIntent: o.onIntent } : {}),
          ...(entry.clientIdPrefix !== undefined ? { clientIdPrefix: entry.clientIdPrefix } : {}),
          ...(o.onProgress !== undefined ? { onProgress: o.onProgress } : {}),
          ...(entry.onPlot !== undefined ? { onPlot: entry.onPlot } : {}),
          ...(entry.indicatorMemo !== undefined ? { indicatorMemo: entry.indicatorMemo } : {}),
        });
  const driven: Driven = engine ?? o.host!({ execution, portfolio });
  let detach: (() => void) | undefined;
  const a: Assembly = {
    mode: o.mode,
    // A portfolio's assembly has no one engine: asking for it is a mistake of the caller's.
    get engine(): Engine<Params, unknown> {
      if (engine === undefined) throw new TypeError('a portfolio assembly has an engine per strategy');
      return engine;
    },
    driven,
    portfolio,
    risk,
    execution,
    broker,
    sim,
    v20,
    attach(onFailure) {
      detach ??= driven.attach(onFailure);
    },
    feed: (batch, before) => driven.feed(batch, before),
    drive: (events$) => driveLive(driven, events$),
    stop: () => driven.stop(),
    detach() {
      detach?.();
      detach = undefined;
    },
  };
  for (const w of watchers) w(o.mode, a);
  return a;
}

/** The broker of a choice: the simulator from the one factory (seeded, with a mode's adapter over it), or the v20 send point. */
async function brokerOf(
  c: BrokerChoice,
): Promise<{ broker: Execution; sim: SimBroker | undefined; v20: V20Execution | undefined }> {
  if (c.kind === 'sim') {
    const sim = simBroker(c.settings);
    c.seed?.(sim);
    return { broker: c.execution?.(sim) ?? sim, sim, v20: undefined };
  }
  // Loaded only for a run against an account: a backtest does not load the HTTP client.
  const { V20Execution } = await import('../adapters/v20/execution.ts');
  const v20 = new V20Execution(c.options);
  return { broker: v20, sim: undefined, v20 };
}

/**
 * A live source through the one feed: each event as a batch of one, as it arrives. What a handler
 * throws (here, or on a transaction between two events: `attach`'s failure) ends the drive; the
 * events after it are not fed. Completion runs the strategy's onStop and detaches.
 */
export function driveLive(engine: Driven, events$: Observable<MarketEvent>): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let failed = false;
    let sub: { unsubscribe(): void } | undefined;
    let detach: (() => void) | undefined;
    const fail = (e: unknown): void => {
      if (failed) return;
      failed = true;
      sub?.unsubscribe();
      detach?.();
      reject(e);
    };
    detach = engine.attach(fail);
    sub = events$.subscribe({
      next: (ev) => {
        if (failed) return;
        try {
          engine.feed([ev]);
        } catch (e) {
          fail(e);
        }
      },
      error: fail,
      complete: () => {
        if (failed) return;
        try {
          engine.stop();
          detach?.();
          resolve();
        } catch (e) {
          fail(e);
        }
      },
    });
    // A source that emitted synchronously and failed before `subscribe` returned.
    if (failed) sub.unsubscribe();
  });
}
