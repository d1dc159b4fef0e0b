// Issue 33, item 4: the journal's "sent" mark. A restart waits out (the in-doubt rule) only an
// intent whose request left the process; one that was decided and journaled but never sent is
// reported as never sent and not waited for. The runner in process against the sandbox over real
// HTTP; the journals are written by the Journal itself, as a runner killed at that moment leaves them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { OrderIntent } from '../../src/domain/intents.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Journal } from '../../src/runner/order-path/journal.ts';
import type { Runner } from '../../src/runner/session/runner.ts';
import { accountTransactions, rig, type Rig, until } from './harness.ts';

let r: Rig | undefined;
let runner: Runner | undefined;
afterEach(async () => {
  await runner?.stop('test end').catch(() => undefined);
  await r?.close();
  [r, runner] = [undefined, undefined];
});

const cid = (t: Transaction): string | undefined =>
  (t as { clientExtensions?: { id?: string } }).clientExtensions?.id;
const order = (id: string): OrderIntent => ({
  kind: 'order',
  id,
  request: { type: 'MARKET', instrument: 'EUR_USD', units: '1000' },
});

/**
 * A journal of a run that decided `intent` and (with `sent`) sent it, then was killed: the first run
 * starts and stops (its baseline), then the intent is journaled as the runner journals it.
 */
async function journalWith(intent: OrderIntent, sent: boolean): Promise<void> {
  r = await rig();
  r.sandbox.pushPrice({ instrument: 'EUR_USD', bid: 1.1, ask: 1.10015 });
  const first = r.runner();
  await first.start();
  await first.stop('first run');
  const j = Journal.open(r.journalDir);
  j.intent(intent, Date.now());
  if (sent) j.sent(intent.id);
  j.close();
}

/** A runner whose log lines are kept (messages only). */
function loggingRunner(o: { requestWindowMs: number }): { runner: Runner; lines: () => string[] } {
  const file = join(r!.journalDir, 'restart.log');
  const log = pino(pino.destination({ dest: file, sync: true }));
  runner = r!.runner({ log, maxIntentAgeMs: 600_000, requestWindowMs: o.requestWindowMs });
  return {
    runner,
    lines: () =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
  };
}

describe('the sent mark at a restart', () => {
  it('a decided but never sent intent: reported as never sent, not waited for (even with a 10-minute window), then sent once', async () => {
    const id = 'ping-pong-unsent-1';
    await journalWith(order(id), false);
    expect(Journal.read(r!.journalDir).intents.map((i) => [i.intent.id, i.marksSent, i.sentAt])).toEqual([
      [id, true, undefined],
    ]);
    const start = (await r!.rest.summary(r!.accountID)).lastTransactionID;
    const { runner: run, lines } = loggingRunner({ requestWindowMs: 600_000 });
    // Before the sent mark the start held it in doubt for its whole window (here 10 minutes).
    let started = false;
    const starting = run.start().then(() => (started = true));
    let heldInDoubt = false;
    await until(
      () => {
        if (run.inDoubt.some((d) => d.intentId === id)) heldInDoubt = true;
        return started || heldInDoubt;
      },
      'the start to end or to hold the intent in doubt',
      60_000,
    );
    expect(heldInDoubt).toBe(false);
    await starting;
    expect(lines()).toContain(
      'journaled intent was never sent (decided, but its request never left the process): not waiting for it',
    );
    expect(lines().some((l) => l.includes('sent within its request window: in doubt'))).toBe(false);
    await until(
      async () => (await accountTransactions(r!, start)).some((t) => t.type === 'ORDER_FILL'),
      'the resent order to fill',
    );
    const result = await run.stop('done');
    expect(result.recovered).toMatchObject({ lookedUp: 1, neverSent: 1, resubmitted: 1 });
    expect(
      (await accountTransactions(r!, start)).filter((t) => t.type === 'MARKET_ORDER' && cid(t) === id),
    ).toHaveLength(1);
  });

  it('a sent intent that is not at the broker: still held in doubt and looked up until its window has passed, then sent once', async () => {
    const id = 'ping-pong-sent-1';
    await journalWith(order(id), true);
    expect(Journal.read(r!.journalDir).intents[0]?.sentAt).toBeTypeOf('number');
    const start = (await r!.rest.summary(r!.accountID)).lastTransactionID;
    const { runner: run, lines } = loggingRunner({ requestWindowMs: 1000 });
    const starting = run.start();
    await until(
      () => run.inDoubt.some((d) => d.intentId === id),
      'the start to hold the sent intent in doubt',
    );
    await starting;
    expect(lines()).toContain(
      'journaled intent not at the broker, but sent within its request window: in doubt; waiting for a sign of it before deciding',
    );
    await until(
      async () => (await accountTransactions(r!, start)).some((t) => t.type === 'ORDER_FILL'),
      'the resent order to fill',
    );
    const result = await run.stop('done');
    expect(result.recovered).toMatchObject({ lookedUp: 1, neverSent: 0, resubmitted: 1 });
    expect(
      (await accountTransactions(r!, start)).filter((t) => t.type === 'MARKET_ORDER' && cid(t) === id),
    ).toHaveLength(1);
  });
});
