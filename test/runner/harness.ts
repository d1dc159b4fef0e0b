// Shared by the runner's end-to-end tests: a sandbox on 127.0.0.1, a runner against it, and a
// deterministic test strategy. Nothing is mocked: real HTTP, real streams, real files.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { V20Http } from '../../src/adapters/v20/http.ts';
import { V20Rest } from '../../src/adapters/v20/rest.ts';
import { loadInstruments } from '../../src/domain/instrument.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { assemble } from '../../src/app/assembly.ts';
import { Runner, type RunnerOptions } from '../../src/runner/session/runner.ts';
import { startSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/server.ts';
import pingPong from './ping-pong-strategy.ts';

export { pingPong };

export const quiet = pino({ level: process.env.FXFLOW_TEST_LOG ?? 'silent' });

export interface Rig {
  readonly sandbox: Sandbox;
  readonly http: V20Http;
  readonly rest: V20Rest;
  readonly accountID: string;
  readonly journalDir: string;
  runner(o?: Partial<RunnerOptions>): Runner;
  close(): Promise<void>;
}

export async function rig(opts: SandboxOptions = {}): Promise<Rig> {
  const sandbox = await startSandbox({ heartbeatMs: 200, ...opts });
  const http = new V20Http({
    baseUrl: sandbox.url,
    log: quiet,
    ...(opts.requireToken !== undefined ? { token: opts.requireToken } : {}),
    retryBaseMs: 20,
    rate: { perSecond: 1000, burst: 1000 },
    connectionsPerSecond: 1000,
  });
  const rest = new V20Rest(http);
  const accountID = sandbox.accountIDs[0]!;
  const journalDir = mkdtempSync(join(tmpdir(), 'fxflow-run-'));
  const instruments = loadInstruments();
  const runners: Runner[] = [];
  return {
    sandbox,
    http,
    rest,
    accountID,
    journalDir,
    runner(o = {}) {
      const r = new Runner({
        assemble,
        strategy: pingPong as never,
        name: 'ping-pong',
        params: pingPong.params,
        http,
        rest,
        accountID,
        instruments,
        journalDir,
        log: quiet,
        statusEveryMs: 0,
        warmup: 0,
        // The in-doubt rule's window, short: on loopback with no proxy in between, a request a
        // killed or timed-out client wrote reaches the sandbox within milliseconds (tests of the
        // rule itself use the defaults, through the fault proxy).
        requestWindowMs: 1000,
        inDoubtMarginMs: 500,
        streams: { watchdogMs: 1500, reconnectBaseMs: 10, reconnectCapMs: 100 },
        ...o,
      });
      runners.push(r);
      return r;
    },
    async close() {
      await sandbox.close();
    },
  };
}

/** Every transaction of the account after `after`, by REST. */
export async function accountTransactions(r: Rig, after = '0'): Promise<Transaction[]> {
  return (await r.rest.transactionsSinceId(r.accountID, after)).transactions;
}

/** Waits until the runner's journal has every transaction the account has, and submissions drained. */
export async function settle(r: Rig, runner: Runner, timeoutMs = 15_000): Promise<void> {
  const t0 = Date.now();
  for (;;) {
    await runner.execution?.drain();
    const { lastTransactionID } = await r.rest.summary(r.accountID);
    if (runner.journal.lastTransactionID === lastTransactionID) {
      await runner.execution?.drain();
      const again = (await r.rest.summary(r.accountID)).lastTransactionID;
      if (again === lastTransactionID) return;
    }
    if (Date.now() - t0 > timeoutMs)
      throw new Error(
        `runner did not catch up: journal at ${runner.journal.lastTransactionID}, account at ${lastTransactionID}`,
      );
    await new Promise((res) => setTimeout(res, 10));
  }
}

/** A deterministic EUR_USD price path around 1.10 (ask = bid + 1.5 pips). */
export function pricePath(
  n: number,
  start = Date.UTC(2024, 0, 2, 10, 0),
): { instrument: string; bid: number; ask: number; time: number }[] {
  const out = [];
  for (let i = 0; i < n; i++) {
    const bid = Math.round((1.1 + 0.0008 * Math.sin(i / 7) + 0.0003 * Math.cos(i / 3)) * 1e5) / 1e5;
    out.push({
      instrument: 'EUR_USD',
      bid,
      ask: Math.round((bid + 0.00015) * 1e5) / 1e5,
      time: start + i * 1000,
    });
  }
  return out;
}

/** Duplicate order count: client IDs that appear on more than one order-create transaction. */
export function duplicateOrders(txs: readonly Transaction[]): number {
  const seen = new Map<string, number>();
  for (const t of txs) {
    if (!t.type.endsWith('_ORDER')) continue;
    const id = (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;
    if (id !== undefined) seen.set(id, (seen.get(id) ?? 0) + 1);
  }
  let d = 0;
  for (const n of seen.values()) if (n > 1) d += n - 1;
  return d;
}

/**
 * Pushes `path[from..to)` (exclusive) into the sandbox, moving its clock to each, and waits until
 * the runner has handled each; `seen` is the count it had handled before. Returns the new count.
 */
export async function pushPrices(
  rg: Rig,
  runner: Runner,
  path: readonly { instrument: string; bid: number; ask: number; time: number }[],
  from: number,
  to: number,
  seen: number,
): Promise<number> {
  for (let i = from; i < to; i++) {
    const p = path[i]!;
    rg.sandbox.setTime(p.time);
    rg.sandbox.pushPrice(p);
    await waitTicks(runner, ++seen);
  }
  return seen;
}

/** Waits until the runner has handled `n` new prices. */
export async function waitTicks(runner: Runner, n: number, ms = 20_000): Promise<void> {
  const t0 = Date.now();
  while (runner.ticks < n) {
    if (Date.now() - t0 > ms) throw new Error(`runner saw ${runner.ticks} of ${n} prices`);
    await new Promise((res) => setTimeout(res, 5));
  }
}

/** A running `fxflow run` process and what it printed so far. */
export interface FxflowRun {
  readonly proc: ChildProcess;
  out(): string;
  err(): string;
  readonly exited: Promise<number | null>;
}

/**
 * Starts `fxflow run <strategy> --env sandbox` as its own process against the sandbox, with `args`
 * added (journal, log file, broker...); resolves once it says it is running and `streams` more
 * streams are connected (2: transactions and pricing; 1 with `--broker sim`, which has no
 * transaction stream).
 */
export async function startFxflowRun(
  sandbox: Sandbox,
  strategy: string,
  args: readonly string[],
  streams = 2,
  o: { env?: NodeJS.ProcessEnv; url?: string } = {},
): Promise<FxflowRun> {
  const before = sandbox.stats().streamConnections;
  const proc = spawnFxflowRun(o.url ?? sandbox.url, strategy, args, o.env);
  const run = watch(proc);
  const { out, err } = run;
  const t0 = Date.now();
  while (!out().includes('Ctrl-C stops') || sandbox.stats().streamConnections < before + streams) {
    if (proc.exitCode !== null || Date.now() - t0 > 30_000)
      throw new Error(`fxflow run did not start: ${out()} ${err()}`);
    await new Promise((res) => setTimeout(res, 20));
  }
  return run;
}

/** Spawns `fxflow run <strategy> --env sandbox --url <url> ...args` (no wait). */
export function spawnFxflowRun(
  url: string,
  strategy: string,
  args: readonly string[],
  env?: NodeJS.ProcessEnv,
): ChildProcess {
  const root = resolve(import.meta.dirname, '../..');
  // The run folder in a temporary directory unless the test names one (never under the repository's runs/).
  const out = args.includes('--out') ? [] : ['--out', mkdtempSync(join(tmpdir(), 'fxflow-run-folder-'))];
  return spawn(
    process.execPath,
    [
      join('bin', 'fxflow.js'),
      'run',
      strategy,
      '--env',
      'sandbox',
      '--url',
      url,
      '--status-every',
      '0',
      '--warmup',
      '0',
      ...out,
      ...args,
    ],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], ...(env !== undefined ? { env } : {}) },
  );
}

/** Collects a process's output and exit code. */
export function watch(proc: ChildProcess): FxflowRun {
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((res) => proc.on('exit', (code) => res(code)));
  return { proc, out: () => out, err: () => err, exited };
}

/** Waits until `pred` holds (checked every 10 ms); throws naming `what` after `ms`. */
export async function until(
  pred: () => boolean | Promise<boolean>,
  what: string,
  ms = 20_000,
): Promise<void> {
  const t0 = Date.now();
  while (!(await pred())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

/**
 * Ends what one end-to-end test opened, in the order that leaves nothing behind: the `fxflow run`
 * process (killed), then the proxy in front of the sandbox, then the rig.
 */
export async function endTest(
  run: FxflowRun | undefined,
  proxy: { close(): Promise<void> } | undefined,
  r: Rig | undefined,
): Promise<void> {
  run?.proc.kill('SIGKILL');
  await proxy?.close();
  await r?.close();
}
