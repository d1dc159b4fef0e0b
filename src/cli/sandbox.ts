import { existsSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Argv } from 'yargs';
import type { FaultOptions, SandboxOptions } from '../sandbox/server.ts';
import { fillModels } from '../sandbox/fill-models.ts';
import { catalogFolder, catalogFromEnv } from '../adapters/catalog/location.ts';
import { CATALOG_FLAG } from './catalog-flag.ts';
import { parseUserTime } from '../domain/time.ts';
import { FILL_MODEL_OPTIONS } from './fill-options.ts';
import { createLogger, flushLogger } from './logger.ts';

/** The flags of `fxflow sandbox`. */
export interface SandboxArgs {
  port: number;
  host?: string;
  data?: string;
  catalog?: string;
  labs?: string;
  speed?: number;
  start?: string;
  manual?: boolean;
  requireToken?: boolean;
  heartbeatMs?: number;
  marketHours?: boolean;
  keepTransactions?: number;
  slowStreamBytes?: number;
  slowStreamSeconds?: number;
  legacyReport?: string;
  faultDropAfter?: number;
  faultDropStreams?: number;
  faultErrorRate?: number;
  fault429?: number;
  faultSplit?: string;
  faultCorrupt?: number;
  faultStall?: boolean;
  faultSeed?: number;
  slippage?: string;
  latency?: string;
  latencyTimeout?: number;
}

/** A bad `fxflow sandbox` flag. */
export class SandboxFlagError extends Error {
  readonly code = 'SANDBOX_FLAG' as const;
  constructor(message: string) {
    super(message);
    this.name = 'SandboxFlagError';
  }
}

/** Declares the options of `fxflow sandbox` (register with `.command('sandbox', ..., sandboxCommand, runSandbox)`). */
export function sandboxCommand(y: Argv): Argv<SandboxArgs> {
  return y
    .option('port', { type: 'number', default: 8080, describe: 'Port on 127.0.0.1 (0 = a free one)' })
    .option('host', {
      type: 'string',
      describe: 'Loopback address to listen on (127.0.0.1, ::1 or localhost)',
    })
    .option('data', {
      type: 'string',
      describe:
        'Catalog folder for replay and candles (default: --catalog, $FXFLOW_CATALOG, else the bundled sample in the user cache)',
    })
    .options(CATALOG_FLAG)
    .option('labs', {
      type: 'string',
      describe:
        'Serve the labs items recorded in this catalog folder (fxflow record), each from the time it became known, instead of generated labs data',
    })
    .option('speed', { type: 'number', describe: 'Replay speed: simulated ms per real ms (default 1)' })
    .option('start', {
      type: 'string',
      describe: 'Replay start / manual clock start, RFC 3339 (default 2024-01-02T00:00:00Z)',
    })
    .option('manual', {
      type: 'boolean',
      describe: 'Manual clock: time and prices move only through POST /sandbox/time, /advance, /prices',
    })
    .option('require-token', {
      type: 'boolean',
      describe:
        'Require "Authorization: Bearer <token>" on every route (API, labs, OAuth, control); the token is read from FXFLOW_SANDBOX_TOKEN',
    })
    .option('heartbeat-ms', { type: 'number', describe: 'Stream heartbeat interval (default 5000)' })
    .option('market-hours', {
      type: 'boolean',
      describe:
        "Instruments' trading hours: prices tradeable: false and market orders MARKET_HALTED while closed (default on); --no-market-hours to trade around the clock",
    })
    .option('keep-transactions', {
      type: 'number',
      describe:
        'Transactions each account keeps (default 100000); older ones answer 416, so memory stays bounded',
    })
    .option('slow-stream-bytes', {
      type: 'number',
      describe:
        'Slow stream readers: close a stream once more than this many bytes wait in the sandbox for its socket (default 524288)',
    })
    .option('slow-stream-seconds', {
      type: 'number',
      describe:
        'Slow stream readers: close a stream whose socket has refused writes this many seconds with no drain (default 10; fractions allowed)',
    })
    .option('legacy-report', {
      type: 'string',
      describe:
        'At exit, write each legacy /v1 call the clients made, how often, and its /v3 replacement with the field mapping (Markdown; JSON when FILE ends in .json)',
    })
    .option('fault-drop-after', { type: 'number', describe: 'Fault: close each stream after N lines' })
    .option('fault-drop-streams', {
      type: 'number',
      describe: 'Fault: drop at most this many streams that way (default: all)',
    })
    .option('fault-error-rate', {
      type: 'number',
      describe: 'Fault: share 0..1 of REST requests answered 500/503',
    })
    .option('fault-429', {
      type: 'number',
      describe: 'Fault: the first N REST requests get 429 with Retry-After: 1',
    })
    .option('fault-split', {
      type: 'string',
      describe: "Fault: write stream lines in pieces: 'byte' or a chunk size in bytes",
    })
    .option('fault-corrupt', {
      type: 'number',
      describe: 'Fault: share 0..1 of stream lines preceded by a malformed line',
    })
    .option('fault-stall', { type: 'boolean', describe: 'Fault: write no heartbeats or prices on streams' })
    .option('fault-seed', { type: 'number', describe: 'Seed of the fault choices (default 1)' })
    .option('slippage', FILL_MODEL_OPTIONS.slippage)
    .option('latency', FILL_MODEL_OPTIONS.latency)
    .option('latency-timeout', {
      type: 'number',
      describe:
        "With --latency: real ms an order answer waits for the sandbox clock to reach the order's arrival before it is a 504 (default 10000; the order still fills then)",
    })
    .example(
      '$0 sandbox --manual --slippage fixed:0.5 --latency fixed:250',
      'Fills half a pip worse, orders reaching the market 250 ms (sandbox time) after they are sent',
    )
    .example('$0 sandbox --manual --port 0', 'A sandbox on a free port whose clock moves only when told')
    .example('$0 sandbox --speed 60', 'Replay the bundled sample one simulated minute per second')
    .example(
      '$0 sandbox --slow-stream-bytes 65536 --slow-stream-seconds 2',
      'Drop a stream reader that falls 64 KiB behind or stops reading for 2 s',
    )
    .example(
      '$0 sandbox --legacy-report migration.md',
      'Serve a legacy /v1 bot and write its migration checklist at exit',
    )
    .example(
      'FXFLOW_SANDBOX_TOKEN=secret $0 sandbox --require-token --fault-error-rate 0.1',
      'Token required, 10% of requests fail',
    ) as unknown as Argv<SandboxArgs>;
}

const share = (v: number | undefined, flag: string): number | undefined => {
  if (v === undefined) return undefined;
  if (!(v >= 0 && v <= 1)) throw new SandboxFlagError(`--${flag} must be a share between 0 and 1 (got ${v})`);
  return v;
};
const count = (v: number | undefined, flag: string): number | undefined => {
  if (v === undefined) return undefined;
  if (!Number.isInteger(v) || v < 0)
    throw new SandboxFlagError(`--${flag} must be a whole number >= 0 (got ${v})`);
  return v;
};

/** The sandbox options the flags describe (exported for tests). */
export function sandboxOptions(a: SandboxArgs, env: NodeJS.ProcessEnv = process.env): SandboxOptions {
  const faults: FaultOptions = {};
  const drop = count(a.faultDropAfter, 'fault-drop-after');
  if (drop !== undefined) faults.dropStreamAfterLines = drop;
  const drops = count(a.faultDropStreams, 'fault-drop-streams');
  if (drops !== undefined) faults.dropStreams = drops;
  const rate = share(a.faultErrorRate, 'fault-error-rate');
  if (rate !== undefined) faults.errorRate = rate;
  const burst = count(a.fault429, 'fault-429');
  if (burst !== undefined) faults.rateLimitBurst = burst;
  if (a.faultSplit !== undefined) {
    if (a.faultSplit === 'byte') faults.splitLines = 'byte';
    else {
      const n = Number(a.faultSplit);
      if (!Number.isInteger(n) || n < 1)
        throw new SandboxFlagError(
          `--fault-split must be 'byte' or a chunk size in bytes >= 1 (got ${a.faultSplit})`,
        );
      faults.splitLines = n;
    }
  }
  const corrupt = share(a.faultCorrupt, 'fault-corrupt');
  if (corrupt !== undefined) faults.corruptLineRate = corrupt;
  if (a.faultStall) faults.stallHeartbeats = true;
  if (a.faultSeed !== undefined) faults.seed = a.faultSeed;
  if (!Number.isInteger(a.port) || a.port < 0 || a.port > 65535)
    throw new SandboxFlagError(`--port must be 0..65535 (got ${a.port})`);
  if (a.speed !== undefined && !(a.speed > 0))
    throw new SandboxFlagError(`--speed must be a positive number (got ${a.speed})`);
  if (a.heartbeatMs !== undefined && !(a.heartbeatMs >= 10))
    throw new SandboxFlagError(`--heartbeat-ms must be at least 10 (got ${a.heartbeatMs})`);
  const o: SandboxOptions = { port: a.port, clock: a.manual ? 'manual' : 'replay', faults };
  if (a.slippage !== undefined || a.latency !== undefined || a.latencyTimeout !== undefined) {
    const names = {
      ...(a.slippage !== undefined ? { slippage: a.slippage } : {}),
      ...(a.latency !== undefined ? { latency: a.latency } : {}),
    };
    try {
      fillModels(names, (n) => `--${n}`);
    } catch (e) {
      throw new SandboxFlagError((e as Error).message);
    }
    if (a.latencyTimeout !== undefined && !(Number.isFinite(a.latencyTimeout) && a.latencyTimeout > 0))
      throw new SandboxFlagError(`--latency-timeout must be milliseconds > 0 (got ${a.latencyTimeout})`);
    o.fill = { ...names, ...(a.latencyTimeout !== undefined ? { latencyTimeoutMs: a.latencyTimeout } : {}) };
  }
  if (a.host !== undefined) o.host = a.host;
  // Its catalog: --data, --catalog, FXFLOW_CATALOG, else the bundled sample (the server's default).
  const data = a.data ?? (a.catalog !== undefined ? catalogFolder(a.catalog) : catalogFromEnv());
  if (data !== undefined) o.data = data;
  if (a.labs !== undefined) o.labs = a.labs;
  if (a.speed !== undefined) o.speed = a.speed;
  if (a.start !== undefined) {
    // The commands' own time parser (seconds optional); what it cannot read goes as given (the sandbox's v20 request times: a zoneless time is New York's).
    const t = parseUserTime(a.start);
    o.start = Number.isFinite(t) ? t : a.start;
  }
  if (a.heartbeatMs !== undefined) o.heartbeatMs = a.heartbeatMs;
  if (a.marketHours !== undefined) o.marketHours = a.marketHours;
  if (a.keepTransactions !== undefined) {
    if (!Number.isInteger(a.keepTransactions) || a.keepTransactions < 1)
      throw new SandboxFlagError(
        `--keep-transactions must be a whole number >= 1 (got ${a.keepTransactions})`,
      );
    o.keepTransactions = a.keepTransactions;
  }
  const streams: { maxQueuedBytes?: number; maxBlockedMs?: number } = {};
  if (a.slowStreamBytes !== undefined) {
    if (!Number.isInteger(a.slowStreamBytes) || a.slowStreamBytes < 1)
      throw new SandboxFlagError(
        `--slow-stream-bytes must be a whole number of bytes >= 1 (got ${a.slowStreamBytes}); leave it out for the default 524288 (512 KiB)`,
      );
    streams.maxQueuedBytes = a.slowStreamBytes;
  }
  if (a.slowStreamSeconds !== undefined) {
    if (!(Number.isFinite(a.slowStreamSeconds) && a.slowStreamSeconds > 0))
      throw new SandboxFlagError(
        `--slow-stream-seconds must be a number of seconds > 0 (got ${a.slowStreamSeconds}); leave it out for the default 10`,
      );
    streams.maxBlockedMs = a.slowStreamSeconds * 1000;
  }
  if (streams.maxQueuedBytes !== undefined || streams.maxBlockedMs !== undefined) o.streams = streams;
  if (a.requireToken) {
    const token = env.FXFLOW_SANDBOX_TOKEN;
    if (!token)
      throw new SandboxFlagError(
        '--require-token needs the token in the environment variable FXFLOW_SANDBOX_TOKEN (it is never taken from a flag, which would show in ps)',
      );
    o.requireToken = token;
  }
  return o;
}

/** Runs `fxflow sandbox` until SIGINT or SIGTERM, then closes streams and the server. */
export async function runSandbox(a: SandboxArgs): Promise<void> {
  const log = createLogger();
  const opts = sandboxOptions(a);
  // Loaded here, not at the top: other commands start without the server and its HTTP stack.
  const { startSandbox } = await import('../sandbox/server.ts');
  const report = a.legacyReport !== undefined ? resolve(a.legacyReport) : undefined;
  if (report !== undefined && !existsSync(dirname(report)))
    throw new SandboxFlagError(
      `--legacy-report ${a.legacyReport}: the folder ${dirname(report)} does not exist (create it, or give a file in an existing folder)`,
    );
  const sandbox = await startSandbox({ ...opts, log });
  process.stdout.write(`fxflow sandbox listening on ${sandbox.url}\n`);
  process.stdout.write(
    `accounts: ${sandbox.accountIDs.join(', ')}; clock: ${opts.clock}; authentication: ${opts.requireToken ? 'bearer token required' : 'off'}; fill models: slippage ${opts.fill?.slippage ?? 'none'} · latency ${opts.fill?.latency ?? 'none'}\n`,
  );
  await new Promise<void>((done) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sandbox.close();
  if (report !== undefined) {
    writeFileSync(report, sandbox.legacyReport(report.endsWith('.json')));
    process.stdout.write(`legacy /v1 migration report written to ${report}\n`);
  }
  process.stdout.write('fxflow sandbox stopped\n');
  await flushLogger(log);
}
