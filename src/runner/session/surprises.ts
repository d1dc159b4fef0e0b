import type { Logger } from 'pino';
import { type OrderIntent, RUNNER_ID_PREFIX } from '../../domain/intents.ts';
import { describeUnknownFill, type UnknownFill, unknownFillHaltWhy } from '../order-path/unknown-fills.ts';
import { type DriftBreach, type DriftGuard, formatDrift } from '../recording/drift.ts';
import type { DriftStatus, RunnerOptions } from './runner-options.ts';

/** What the run does about a surprise: its log, the halt's state, the kill switch, a close of its own. */
export interface SurpriseParts {
  readonly log: Logger;
  readonly halted: () => boolean;
  /** Engages the kill switch (called from a microtask: never inside the engine's handling). */
  readonly kill: (why: string) => void;
  /** Submits a close of the runner's own through the gate; undefined before the gate exists. */
  readonly close: ((intent: OrderIntent) => void) | undefined;
  readonly runId: string;
  /** The next number for a close's client ID. */
  readonly nextClose: () => number;
}

/**
 * An unknown fill (a fill the runner did not expect): logged at error level and said on the
 * terminal, then the policy (`onUnknownFill`): 'halt' engages the kill switch, 'close' closes the
 * trade it opened (a close of the runner's own, journaled), 'keep' nothing more.
 */
export function onUnknownFill(o: RunnerOptions, u: UnknownFill, p: SurpriseParts): void {
  const policy = o.onUnknownFill ?? 'halt';
  const what = describeUnknownFill(u);
  const halted = p.halted();
  p.log.error({ unknownFill: u, policy }, `UNKNOWN FILL: ${what}`);
  o.say?.(
    `UNKNOWN FILL: ${what}; --on-unknown-fill ${policy}: ${policy === 'halt' ? (halted ? 'the kill switch is engaged already' : 'engaging the kill switch') : policy === 'close' ? (u.tradeOpened !== undefined ? `closing trade ${u.tradeOpened}` : 'it opened no trade: nothing to close') : 'kept, trading on'}`,
  );
  if (policy === 'halt') {
    // Not from inside the engine's handling of this transaction: the kill switch stops the engine.
    if (!halted) queueMicrotask(() => p.kill(unknownFillHaltWhy(what)));
  } else if (policy === 'close' && u.tradeOpened !== undefined && p.close !== undefined && !halted) {
    p.close({
      kind: 'closeTrade',
      id: `${RUNNER_ID_PREFIX}unknown-${p.runId}-${p.nextClose()}`,
      tradeSpecifier: u.tradeOpened,
      units: 'ALL',
    });
  }
}

/**
 * A drift tolerance passed (`--shadow --max-drift`): logged at error level and said on the
 * terminal, then the kill switch's halt, journaled with the breach as its reason (which tolerance, which fills).
 */
export function onDrift(o: RunnerOptions, b: DriftBreach, p: SurpriseParts): void {
  const halted = p.halted();
  p.log.error(
    { drift: { tolerance: b.tolerance, limit: b.limit, value: b.value, fills: b.fills } },
    `DRIFT: ${b.why}`,
  );
  o.say?.(`DRIFT: ${b.why}; ${halted ? 'the kill switch is engaged already' : 'engaging the kill switch'}`);
  // Not from inside the engine's handling of a price or transaction: the kill switch stops the engine.
  if (!halted) queueMicrotask(() => p.kill(b.why));
}

/** The drift guard's state now (the status page and the report); undefined without `--max-drift`. */
export function driftStatus(g: DriftGuard | undefined): DriftStatus | undefined {
  if (g === undefined) return undefined;
  return {
    tolerances: formatDrift(g.tolerances),
    compared: g.compared,
    measures: g.measures,
    drifted: [...g.drifted],
    ...(g.breach !== undefined ? { breach: g.breach } : {}),
  };
}
