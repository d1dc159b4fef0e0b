import type { Logger } from 'pino';
import { KillSwitch } from '../order-path/kill-switch.ts';
import type { RunnerOptions } from './runner-options.ts';
import { CtrlC } from './session.ts';

/**
 * The operator's hands on a running session, once it runs: the kill switch (the kill file, and
 * SIGUSR2 with `signals`), SIGTERM (the graceful stop) and SIGINT (`ctrlC`: three steps).
 * Returns the function that lets go of them all (the stop calls it).
 */
export function listenToOperator(
  o: RunnerOptions,
  on: { readonly kill: (why: string) => void; readonly stop: (why: string) => void; readonly ctrlC: CtrlC },
): () => void {
  const killSwitch = new KillSwitch({
    ...(o.killFile !== undefined ? { file: o.killFile } : {}),
    signal: o.signals === true,
    onKill: on.kill,
  });
  const handlers: [NodeJS.Signals, () => void][] = [];
  if (o.signals) {
    const term = (): void => on.stop('SIGTERM');
    process.once('SIGTERM', term);
    handlers.push(['SIGTERM', term]);
    const int = (): void => on.ctrlC.press();
    process.on('SIGINT', int);
    handlers.push(['SIGINT', int]);
  }
  return () => {
    killSwitch.close();
    for (const [sig, h] of handlers) process.off(sig, h);
  };
}

/** What a stop waits for now, in words: the request in flight, intents waiting to be sent, orders in doubt. */
export function waitingFor(n: {
  readonly waiting: number;
  readonly inFlight: number;
  readonly doubt: number;
  readonly halted: boolean;
}): string {
  const parts: string[] = [];
  parts.push(n.inFlight > 0 ? `the answer to the order request in flight` : 'no request in flight');
  if (n.waiting > 0)
    parts.push(
      `${n.waiting} intent(s) of the strategy waiting to be sent${n.halted ? ' (dropped: never sent)' : ''}`,
    );
  if (n.doubt > 0) parts.push(`${n.doubt} order(s) whose outcome is unknown`);
  return parts.join(', ');
}

/**
 * SIGINT as operators expect (see `CtrlC`): the first starts the graceful stop (and the flatten,
 * if asked) and says what it waits for; the second warns; a third within the window exits NOT
 * FLAT with what is open (`abandon`, else exit code 130).
 */
export function sessionCtrlC(
  o: RunnerOptions,
  s: {
    readonly log: Logger;
    readonly say: (line: string) => void;
    /** The kill switch submitted its closes (the stop flattens then too). */
    readonly killed: () => boolean;
    readonly waitingFor: () => string;
    readonly stopState: () => string | undefined;
    readonly open: () => readonly string[];
    readonly stop: (why: string) => void;
  },
): CtrlC {
  return new CtrlC({
    windowMs: () => o.ctrlCWindowMs ?? 3000,
    first: () => {
      const flatten = o.flattenOnExit === true || s.killed();
      s.say(
        `Ctrl-C: stopping${flatten ? ' and closing every position (--flatten-on-exit)' : ''}; waiting for ${s.waitingFor()}${flatten ? ', then for the account to confirm it is flat' : ''}. Ctrl-C twice more exits without waiting.`,
      );
      s.stop('SIGINT');
    },
    warn: (line) => {
      const state = s.stopState();
      s.say(`${line}${state !== undefined ? ` (now ${state})` : ''}`);
    },
    exit: () => {
      const open = s.open();
      s.log.error({ open }, 'third Ctrl-C: exiting before the stop finished');
      if (o.abandon !== undefined) o.abandon(open);
      else process.exit(130);
    },
  });
}
