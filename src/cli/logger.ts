import { mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import pino, { type Logger } from 'pino';

/** Paths pino censors in every log line: tokens never reach a log. */
export const REDACT_PATHS = [
  'token',
  '*.token',
  'accessToken',
  '*.accessToken',
  'authorization',
  'Authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'headers.Authorization',
  'req.headers.authorization',
];

export interface LoggerOptions {
  /** File to write JSON lines to; stderr when absent. */
  readonly file?: string;
  readonly level?: string;
  /** Stamps each line with the engine's (simulated) time. */
  readonly simTime?: () => number;
  /** `time` as RFC 3339 (a backtest's run folder: every file's times are RFC 3339) instead of epoch ms. */
  readonly isoTime?: boolean;
}

/** The root logger. Components take `log.child({ component })`. */
export function createLogger(o: LoggerOptions = {}): Logger {
  let destination: ReturnType<typeof pino.destination>;
  if (o.file) {
    // The file is opened here, synchronously, so the logger is ready before anything can happen to
    // its folder: opened asynchronously, a refused run that removed its run folder while the open
    // was pending left a destination that pino's exit hook could not flush (a bare stack trace).
    // A log file that cannot be opened or written (a folder that vanished, a full disk) is said once
    // on stderr; the run goes on without it instead of dying on an unhandled 'error' event.
    const file = o.file;
    let said = false;
    const say = (e: NodeJS.ErrnoException): void => {
      if (said) return;
      said = true;
      process.stderr.write(
        `fxflow: cannot write the log file ${file} (${e.code ?? e.message}); going on without it\n`,
      );
    };
    let fd: number;
    try {
      mkdirSync(dirname(file), { recursive: true });
      fd = openSync(file, 'a');
    } catch (e) {
      say(e as NodeJS.ErrnoException);
      return pino({ enabled: false });
    }
    destination = pino.destination({ fd, sync: false });
    destination.on('error', say);
  } else destination = pino.destination(2);
  return pino(
    {
      level: o.level ?? process.env.FXFLOW_LOG_LEVEL ?? 'info',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: undefined,
      ...(o.isoTime ? { timestamp: pino.stdTimeFunctions.isoTime } : {}),
      ...(o.simTime ? { mixin: () => ({ simTime: new Date(o.simTime!()).toISOString() }) } : {}),
    },
    destination,
  );
}

/**
 * Resolves once every line logged so far has been handed to the operating system. pino's own
 * `flush(cb)` calls back at once on an asynchronous destination (sonic-boom with no minimum length),
 * while a write may still be in flight: the destination is then waited on until it drains.
 */
export function flushLogger(log: Logger): Promise<void> {
  const stream = (log as unknown as Record<symbol, unknown>)[pino.symbols.streamSym] as
    { _writing?: unknown; once?: (event: string, f: () => void) => void } | undefined;
  return new Promise((resolve) =>
    log.flush(() => {
      // `_writing`: sonic-boom's "a write is in flight" (it emits 'drain' when that write and all queued after it are done).
      if (stream?._writing === true && typeof stream.once === 'function')
        stream.once('drain', () => resolve());
      else resolve();
    }),
  );
}
