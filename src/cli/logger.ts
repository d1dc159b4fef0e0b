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
  const destination = o.file ? pino.destination({ dest: o.file, mkdir: true, sync: false }) : pino.destination(2);
  if (o.file) {
    // A log file that cannot be opened or written (a folder that vanished, a full disk) is said once
    // on stderr; the run goes on without it instead of dying on an unhandled 'error' event.
    const file = o.file;
    let said = false;
    destination.on('error', (e: NodeJS.ErrnoException) => {
      if (said) return;
      said = true;
      process.stderr.write(`fxflow: cannot write the log file ${file} (${e.code ?? e.message}); going on without it\n`);
    });
  }
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

/** Flushes an async destination before exit. */
export function flushLogger(log: Logger): Promise<void> {
  return new Promise((resolve) => log.flush(() => resolve()));
}
