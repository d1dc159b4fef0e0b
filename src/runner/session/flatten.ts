import type { Logger } from 'pino';
import type { RiskExecution } from '../../engine/risk.ts';
import { type AccountCheck, closeFromAccount } from '../order-path/kill-switch.ts';
import type { RunnerOptions } from './runner-options.ts';

/** What the flatten at a stop or a kill acts through, and whom it tells. */
export interface FlattenParts {
  readonly risk: RiskExecution;
  /** Waits for every request in flight (the order path's drain). */
  readonly drain: () => Promise<void>;
  readonly log: Logger;
  readonly runId: string;
  /** Who asks: 'kill switch' or 'stop' (in the progress lines). */
  readonly who: string;
  /** A line for the operator's terminal, logged too. */
  readonly say: (line: string, level?: 'info' | 'warn' | 'error') => void;
  /** What is open as last seen (before the account is read). */
  readonly view: () => readonly string[];
  /** What the flatten is doing now (the status page), and at its end what it found. */
  readonly onState: (state: string) => void;
  /** Each read of the account: what it holds open. */
  readonly onRead: (open: readonly string[]) => void;
}

/**
 * The flatten against a v20 account (the kill switch, `--flatten-on-exit`): cancels pending
 * entries and, with `flatten`, closes every position the account holds, as OANDA reports it,
 * until the account confirms nothing is open or `--flatten-timeout` passes (closeFromAccount).
 * Says "the account confirms: nothing open", or logs NOT FLAT at error level naming what is open.
 */
export async function flattenAccount(
  o: RunnerOptions,
  p: FlattenParts,
  flatten: boolean,
): Promise<AccountCheck> {
  const check = await closeFromAccount(
    {
      rest: o.rest,
      accountID: o.accountID,
      risk: p.risk,
      drain: p.drain,
      log: p.log,
      runId: p.runId,
      ...(o.flattenTimeoutMs !== undefined ? { timeoutMs: o.flattenTimeoutMs } : {}),
      ...(o.flattenRetryBaseMs !== undefined ? { retryBaseMs: o.flattenRetryBaseMs } : {}),
      ...(o.progressEveryMs !== undefined ? { progressEveryMs: o.progressEveryMs } : {}),
      progress: (line) => p.say(`${p.who}: NOT FLAT yet: ${line}`),
      view: p.view,
      onState: p.onState,
      onRead: p.onRead,
    },
    flatten,
  );
  p.onState(
    check.ok ? 'the account confirms: nothing open' : `NOT FLAT: ${check.open.join(', ') || check.error}`,
  );
  if (check.ok)
    p.say(
      `the account confirms: nothing open (read from OANDA at transaction ${check.lastTransactionID}, after ${check.rounds} round(s) of closes in ${check.seconds} s)`,
      'info',
    );
  else
    p.log.error(
      { ...check },
      'THE ACCOUNT IS NOT FLAT: positions or pending entry orders remain after the closes (or the account could not be read); check it now',
    );
  return check;
}
