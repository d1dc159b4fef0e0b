// Issue 24, the kill -9 soak: 40 cycles (FXFLOW_SOAK_CYCLES, an even number) of `fxflow run` killed while an order is in flight. The fault
// proxy holds each cycle's order request, so the test knows the order is in flight when it kills;
// the request then reaches the sandbox after the kill, either before the restart (odd cycles) or
// while the restarted runner is looking for it (even cycles: it is in doubt there, within its
// request window, and must be found, not resent). Real processes, the sandbox over HTTP, real files.
// Every wait is on an event (the proxy's stages, the process's output, the log file, the account's
// state), and a runner that exits while the test waits on it fails the test at once with its output.
// The counts come from durable records: the proxy's record of every request, the account, the run
// folder; the log is only read for lines the test waited to see written.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import { inputFiles, readInputs, readRunMeta } from '../../src/runner/recording/recording.ts';
import { type FaultProxy, type ProxyRecord, startFaultProxy, v20 } from '../fault-proxy.ts';
import {
  accountTransactions,
  duplicateOrders,
  type FxflowRun,
  pricePath,
  rig,
  type Rig,
  spawnFxflowRun,
  until,
  watch,
  endTest,
} from './harness.ts';

let r: Rig | undefined;
let proxy: FaultProxy | undefined;
let run: FxflowRun | undefined;
afterEach(async () => {
  await endTest(run, proxy, r);
  [run, proxy, r] = [undefined, undefined, undefined];
});

const CYCLES = Number(process.env.FXFLOW_SOAK_CYCLES ?? 40);
/** How long a runner may take to start (or a restart to look its held order up) on a loaded machine. */
const START_MS = 240_000;
const IN_DOUBT = 'sent within its request window: in doubt';
const cid = (t: Transaction): string | undefined =>
  (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;

describe('kill -9 soak', () => {
  it(`${CYCLES} kills while an order is in flight: 0 duplicated, 0 lost; the run folder replays to each cut`, async () => {
    r = await rig();
    proxy = await startFaultProxy(r.sandbox.url);
    const out = join(mkdtempSync(join(tmpdir(), 'fxflow-soak-')), 'run');
    const log = join(r.journalDir, 'run.log');
    // A request window longer than any start under load (2 cores, a loaded CI): a restart that
    // comes late still sees the held order as within its window, as a quick one does. Nothing
    // waits for the window when the order shows up.
    const args = [
      '--journal',
      r.journalDir,
      '--out',
      out,
      '--log-file',
      log,
      '--request-window',
      String(START_MS / 1000 + 60),
    ];
    /** The intents the run's log says a restart held in doubt (lines a kill tore are skipped). */
    const inDoubtLogged = (): Set<string> => {
      const ids = new Set<string>();
      if (!existsSync(log)) return ids;
      for (const line of readFileSync(log, 'utf8').split('\n')) {
        if (!line.includes(IN_DOUBT)) continue;
        try {
          ids.add((JSON.parse(line) as { intentId: string }).intentId);
        } catch {
          // a line cut short by kill -9
        }
      }
      return ids;
    };
    const lookups = new Map<string, ProxyRecord>();
    /** How long each start took, spawn to trading (ms): the figure a loaded machine stretches. */
    const starts: number[] = [];
    const start = (await r.rest.summary(r.accountID)).lastTransactionID;
    const path = pricePath(3 * CYCLES + 3);
    let i = 0;
    const push = (): void => {
      const p = path[i++]!;
      r!.sandbox.setTime(p.time);
      r!.sandbox.pushPrice(p);
    };
    /** Waits for `what` while the runner `p` lives: a runner that exits meanwhile fails the test at once, with its output. */
    const whileAlive = async <T>(p: FxflowRun, what: string, wait: Promise<T>): Promise<T> => {
      let onExit: (code: number | null) => void = () => undefined;
      const died = new Promise<never>((_, reject) => {
        onExit = (code) =>
          reject(
            new Error(
              `the runner exited (code ${code}) while the test waited for ${what}; its stderr: ${p.err().slice(-2000)} its stdout: ${p.out().slice(-1000)}`,
            ),
          );
        p.proc.once('exit', onExit);
      });
      try {
        return await Promise.race([wait, died]);
      } catch (e) {
        // A runner still alive but silent past the wait: its output says where it stands.
        if (p.proc.exitCode === null && p.proc.signalCode === null)
          (e as Error).message +=
            `; the runner (pid ${p.proc.pid}) is still running; its stderr: ${p.err().slice(-2000)} its stdout: ${p.out().slice(-1000)}`;
        throw e;
      } finally {
        p.proc.off('exit', onExit);
      }
    };
    /**
     * Starts a runner; with `held`, releases that order once the restarted runner has looked it up
     * by client ID and had its answer (404: the order is still held here, so the restart must
     * treat it as in doubt), then waits for the log line that says it does.
     */
    const begin = async (held?: string): Promise<FxflowRun> => {
      const streams = r!.sandbox.stats().streamConnections;
      const since = proxy!.requests.length;
      const spawned = performance.now();
      const p = watch(spawnFxflowRun(proxy!.url, 'test/runner/ping-pong-strategy.ts', args));
      if (held !== undefined) {
        // Its answer handed back before the held request goes on: the lookup found nothing (404).
        const lookup = await whileAlive(
          p,
          `the restarted runner's lookup of @${held}`,
          proxy!.reached(
            'replied',
            (x) => x.n > since && x.method === 'GET' && x.path.endsWith(`/orders/@${held}`),
            START_MS,
          ),
        );
        lookups.set(held, lookup);
        proxy!.release();
        await whileAlive(
          p,
          `the log line that ${held} is in doubt`,
          until(() => inDoubtLogged().has(held), `the log line that ${held} is in doubt`, START_MS),
        );
      }
      await whileAlive(
        p,
        'the runner to start',
        until(
          () => p.out().includes('Ctrl-C stops') && r!.sandbox.stats().streamConnections >= streams + 2,
          'the runner to start',
          START_MS,
        ),
      );
      starts.push(performance.now() - spawned);
      return p;
    };
    const heldIDs: string[] = [];
    const heldRecords = new Map<string, ProxyRecord>();
    const t0 = performance.now();
    run = await begin();
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      proxy.rule(v20.orderPost, { kind: 'hold', ms: 600_000 }, 1);
      const seen = proxy.requests.length;
      for (let k = 0; k < 3; k++) push(); // ping-pong decides on every 3rd price
      const held = await proxy.reached('held', (x) => x.n > seen && v20.orderPost(x));
      const id = (JSON.parse(held.body) as { order: { clientExtensions: { id: string } } }).order
        .clientExtensions.id;
      heldIDs.push(id);
      heldRecords.set(id, held);
      run.proc.kill('SIGKILL');
      await run.exited;
      if (cycle % 2 === 1) {
        // The order reaches the account while no runner runs.
        proxy.release();
        await proxy.reached('replied', (x) => x.n === held.n);
        run = await begin();
      } else {
        run = await begin(id);
      }
    }
    // The last runner trades one more order without faults, then stops.
    for (let k = 0; k < 3; k++) push();
    await until(
      async () =>
        (await accountTransactions(r!, start)).filter((t) => t.type === 'ORDER_FILL').length === CYCLES + 1,
      'the last fill',
      120_000,
    );
    // Stopped once the runner has the account's last transaction (journaled): a stop before its stream
    // brought it would leave it out of transactions.jsonl, by the test's doing, not the runner's.
    const last = (await r.rest.summary(r.accountID)).lastTransactionID;
    await whileAlive(
      run,
      `the runner to journal transaction ${last}`,
      until(
        () => Journal.read(r!.journalDir).lastTransactionID === last,
        `the runner to journal transaction ${last}`,
        120_000,
      ),
    );
    run.proc.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    const seconds = (performance.now() - t0) / 1000;

    const txs = await accountTransactions(r, start);
    const orders = txs.filter((t) => t.type === 'MARKET_ORDER');
    const orderIDs = orders.map(cid);
    const intents: string[] = [];
    const meta = readRunMeta(out);
    await readInputs(out, inputFiles(out, meta).files, (x) => {
      if (x.k === 'intent') intents.push(x.intent.id);
    });
    const lost = intents.filter((x) => !orderIDs.includes(x));
    const unrecorded = orderIDs.filter((x) => x === undefined || !intents.includes(x));
    const written = readFileSync(join(out, 'transactions.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => (JSON.parse(l) as Transaction).id);
    // What reached the wire, from the proxy's record (a log can lose its last lines to kill -9; this cannot):
    // every order request by client ID, and for each even cycle's held order, the restart's lookup.
    const posted = proxy.requests
      .filter(v20.orderPost)
      .map(
        (x) =>
          (JSON.parse(x.body) as { order: { clientExtensions: { id: string } } }).order.clientExtensions.id,
      );
    const resent = posted.length - new Set(posted).size;
    const doubted = heldIDs.filter((_, k) => k % 2 === 1);
    // The restart's lookup had its answer before the held order went on: it found nothing (404), the
    // order was in doubt there, and it was found afterwards (one order), never sent again.
    const lookedUpFirst = doubted.filter(
      (id) => lookups.get(id)!.at.replied! <= heldRecords.get(id)!.at.forwarded!,
    );
    const logged = inDoubtLogged();
    const waited = doubted.filter((id) => logged.has(id)).length;
    // No restart waited on an intent that was never sent: every intent a restart held in doubt had its
    // request on the wire (the proxy's record); the ones the journal had without a sent mark were reported, not waited for.
    const waitedUnsent = [...logged].filter((id) => !posted.includes(id));
    const neverSent = existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter((l) => l.includes('journaled intent was never sent')).length
      : 0;
    // The folder replays to each cut.
    const replayOut = mkdtempSync(join(tmpdir(), 'fxflow-soak-replay-'));
    const rp = watch(
      spawn(process.execPath, [join('bin', 'fxflow.js'), 'replay', out, '--out', replayOut], {
        cwd: resolve(import.meta.dirname, '../..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const replayCode = await rp.exited;
    const cuts = rp
      .out()
      .split('\n')
      .filter((l) => / was cut off /.test(l));
    console.log(
      `[kill soak] ${CYCLES} kill -9 with an order in flight in ${seconds.toFixed(0)} s; ${meta.sessions.length} sessions; the account: ${orders.length} orders, ${duplicateOrders(txs)} duplicated; intents recorded ${intents.length}, lost ${lost.length}, orders not recorded ${unrecorded.length}; restarts that waited for an order in doubt ${waited} of ${doubted.length} (its lookup answered before the order went on: ${lookedUpFirst.length}); restarts that waited on a never-sent intent ${waitedUnsent.length}, never-sent intents reported ${neverSent}; order requests ${posted.length}, resent ${resent}; starts ${(Math.min(...starts) / 1000).toFixed(1)}–${(Math.max(...starts) / 1000).toFixed(1)} s; transactions.jsonl ${written.length} of ${txs.length}; replay exit ${replayCode}, ${cuts.length} cut-off sessions named (${cuts[0]})`,
    );
    expect(heldIDs).toHaveLength(CYCLES);
    expect(duplicateOrders(txs)).toBe(0);
    expect(orders).toHaveLength(CYCLES + 1);
    for (const id of heldIDs) expect(orderIDs.filter((x) => x === id)).toHaveLength(1);
    expect(lost).toEqual([]);
    expect(unrecorded).toEqual([]);
    expect(posted).toHaveLength(CYCLES + 1);
    expect(resent).toBe(0);
    expect(doubted).toHaveLength(CYCLES / 2);
    expect(lookedUpFirst).toEqual(doubted);
    expect([...logged].sort()).toEqual([...doubted].sort());
    expect(waitedUnsent).toEqual([]);
    expect(written).toEqual(txs.map((t) => t.id));
    expect(meta.sessions).toHaveLength(CYCLES + 1);
    expect(replayCode).toBe(0);
    expect(cuts).toHaveLength(CYCLES);
  }, 600_000);
});
