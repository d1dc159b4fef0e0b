import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OrderIntent } from '../../src/domain/intents.ts';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { Journal, parseFrames } from '../../src/runner/order-path/journal.ts';

/** The snapshot inside snapshot.json's checksummed envelope. */
const snapshotOf = (dir: string): Record<string, unknown> =>
  JSON.parse(
    (JSON.parse(readFileSync(join(dir, 'snapshot.json'), 'utf8')) as { body: string }).body,
  ) as Record<string, unknown>;
const tmp = (): string => mkdtempSync(join(tmpdir(), 'fxflow-journal-'));
const tx = (id: number): Transaction =>
  ({
    id: String(id),
    type: 'DAILY_FINANCING',
    time: '2024-01-02T22:00:00.000000000Z',
    accountID: '001',
    financing: '0.1234',
  }) as unknown as Transaction;
const order = (id: string): OrderIntent => ({
  kind: 'order',
  id,
  request: { type: 'MARKET', instrument: 'EUR_USD', units: '1000' } as never,
});

describe('Journal', () => {
  it('round-trips intents, confirmations, transactions, state and baseline across reopen and compaction', () => {
    const dir = tmp();
    const j = Journal.open(dir, { compactEvery: 5 });
    j.baseline({ lastTransactionID: '10', balance: '1000' });
    j.intent(order('a-1'), 1, { state: { n: 1 }, sequence: 1, handledTransactionID: '10' });
    j.intent(order('a-2'), 2);
    for (let i = 11; i <= 17; i++) j.transaction(tx(i));
    j.transaction(tx(15)); // not above the last: ignored
    j.confirm('a-1');
    j.snapshot({ state: { n: 2 }, sequence: 2, handledTransactionID: '17' });
    j.close();
    const c = Journal.read(dir);
    expect(c.intents.map((i) => i.intent.id)).toEqual(['a-2']);
    expect(c.transactions.map((t) => t.id)).toEqual(['11', '12', '13', '14', '15', '16', '17']);
    expect(c.lastTransactionID).toBe('17');
    expect(c.state).toEqual({ state: { n: 2 }, sequence: 2, handledTransactionID: '17' });
    expect(c.baseline).toEqual({ lastTransactionID: '10', balance: '1000' });
    expect(statSync(join(dir, 'snapshot.json')).size).toBeGreaterThan(0);
  });

  it('the sent mark: kept across reopen and compaction; an intent journaled before the mark existed counts as possibly sent', () => {
    const dir = tmp();
    const j = Journal.open(dir, { compactEvery: 4 });
    j.intent(order('s-1'), 1);
    j.intent(order('s-2'), 2);
    j.sent('s-2');
    j.sent('nobody'); // not journaled: nothing written
    // A record as a journal from before the mark writes it (no marksSent).
    j.append([{ k: 'intent', intent: order('old-1'), at: 3, wall: 3 }]);
    j.close();
    const byId = (d: string) => new Map(Journal.read(d).intents.map((i) => [i.intent.id, i]));
    let c = byId(dir);
    expect(snapshotOf(dir).upTo).toBe(4); // compacted: the marks came through the snapshot
    expect([c.get('s-1')?.marksSent, c.get('s-1')?.sentAt]).toEqual([true, undefined]);
    expect(c.get('s-2')?.sentAt).toBeTypeOf('number');
    expect(c.get('old-1')?.marksSent).toBeUndefined();
    const k = Journal.open(dir);
    k.sent('s-1');
    k.close();
    c = byId(dir);
    expect(c.get('s-1')?.sentAt).toBeTypeOf('number');
  });

  it('a rebase keeps only the transactions after the new baseline and the intents still waiting, across reopen', () => {
    const dir = tmp();
    const j = Journal.open(dir, { compactEvery: 1_000 });
    j.baseline({ lastTransactionID: '10', balance: '1000' });
    for (let i = 11; i <= 20; i++) j.transaction(tx(i));
    j.intent(order('done'), 1);
    j.confirm('done');
    j.intent(order('waiting'), 2);
    expect(j.transactionCount).toBe(10);
    expect(j.unconfirmedCount).toBe(1);
    expect(() =>
      j.rebase({ lastTransactionID: '18' }, { state: { n: 1 }, sequence: 3, handledTransactionID: '17' }),
    ).toThrow(/handled only up to 17/);
    j.rebase({ lastTransactionID: '18' }, { state: { n: 2 }, sequence: 3, handledTransactionID: '19' });
    expect(j.transactionCount).toBe(2);
    j.transaction(tx(21));
    j.close();
    const c = Journal.read(dir);
    expect(c.baseline).toEqual({ lastTransactionID: '18' });
    expect(c.transactions.map((t) => t.id)).toEqual(['19', '20', '21']);
    expect(c.lastTransactionID).toBe('21');
    expect(c.state).toEqual({ state: { n: 2 }, sequence: 3, handledTransactionID: '19' });
    expect(c.intents.map((i) => i.intent.id)).toEqual(['waiting']);
    // The rebase compacted: the dropped transactions are gone from disk as well.
    expect(JSON.stringify(snapshotOf(dir))).toContain('"id":"19"');
    expect(JSON.stringify(snapshotOf(dir))).not.toContain('"id":"12"');
  });

  it('keeps the latest trading day of the daily-loss limit across reopen and compaction', () => {
    const dir = tmp();
    const j = Journal.open(dir, { compactEvery: 3 });
    expect(j.contents().riskDay).toBeUndefined();
    j.day({ dayEnd: Date.UTC(2024, 0, 2, 22), startNav: 100_000 });
    j.day({ dayEnd: Date.UTC(2024, 0, 3, 22), startNav: 99_750.5 });
    j.transaction(tx(1));
    j.transaction(tx(2)); // the fourth record: compacted into the snapshot
    j.close();
    expect(snapshotOf(dir).riskDay).toEqual({ dayEnd: Date.UTC(2024, 0, 3, 22), startNav: 99_750.5 });
    const again = Journal.open(dir);
    expect(again.contents().riskDay).toEqual({ dayEnd: Date.UTC(2024, 0, 3, 22), startNav: 99_750.5 });
    again.day({ dayEnd: Date.UTC(2024, 0, 4, 22), startNav: 99_000 }); // in the log, after the snapshot
    again.close();
    expect(Journal.read(dir).riskDay).toEqual({ dayEnd: Date.UTC(2024, 0, 4, 22), startNav: 99_000 });
  });

  it("keeps the kill switch's halt (its first time and reason) across reopen, compaction and a rebase, until it is cleared", () => {
    const dir = tmp();
    const j = Journal.open(dir, { compactEvery: 3 });
    expect(j.contents().halt).toBeUndefined();
    expect(j.clearHalt()).toBeUndefined(); // nothing to clear: nothing written
    j.halt({ at: 1000, why: 'SIGUSR2' });
    j.halt({ at: 2000, why: 'file /tmp/KILL' }); // a second engagement keeps the first
    j.transaction(tx(1));
    j.transaction(tx(2));
    j.transaction(tx(3)); // compacted into the snapshot
    j.close();
    expect(snapshotOf(dir).halt).toEqual({ at: 1000, why: 'SIGUSR2' });
    const again = Journal.open(dir);
    expect(again.contents().halt).toEqual({ at: 1000, why: 'SIGUSR2' });
    again.rebase({ lastTransactionID: '3' }, { state: null, sequence: 0, handledTransactionID: '3' });
    again.close();
    expect(Journal.read(dir).halt).toEqual({ at: 1000, why: 'SIGUSR2' });
    const clearing = Journal.open(dir);
    expect(clearing.clearHalt()).toEqual({ at: 1000, why: 'SIGUSR2' });
    clearing.close();
    expect(Journal.read(dir).halt).toBeUndefined();
    const compacting = Journal.open(dir);
    compacting.compact();
    compacting.close();
    expect(Journal.read(dir).halt).toBeUndefined();
    expect(snapshotOf(dir).halt).toBeUndefined();
  });

  it('a crash between snapshot rename and log truncation replays nothing twice', () => {
    const dir = tmp();
    const j = Journal.open(dir, { compactEvery: 1_000 });
    for (let i = 1; i <= 4; i++) j.transaction(tx(i));
    const log = readFileSync(join(dir, 'journal.log'));
    j.compact();
    j.close();
    writeFileSync(join(dir, 'journal.log'), log); // as if truncation never happened
    const c = Journal.read(dir);
    expect(c.transactions.map((t) => t.id)).toEqual(['1', '2', '3', '4']);
  });

  it('property: cutting the last record at any byte loses only that record', () => {
    const dir = tmp();
    const j = Journal.open(dir, { compactEvery: 1_000_000 });
    for (let i = 1; i <= 6; i++) j.transaction(tx(i));
    j.intent(order('last'), 7);
    j.close();
    const full = readFileSync(join(dir, 'journal.log'));
    const lastStart =
      parseFrames(full.subarray(0, full.length)).records.length === 7
        ? full.lastIndexOf(0x0a, full.length - 2) + 1
        : -1;
    expect(lastStart).toBeGreaterThan(0);
    let checked = 0;
    fc.assert(
      fc.property(fc.integer({ min: lastStart, max: full.length - 1 }), (cut) => {
        const d = tmp();
        writeFileSync(join(d, 'journal.log'), full.subarray(0, cut));
        const jj = Journal.open(d);
        const c = jj.contents();
        expect(c.transactions.map((t) => t.id)).toEqual(['1', '2', '3', '4', '5', '6']);
        expect(c.intents).toEqual([]);
        expect(c.tornBytes).toBe(cut - lastStart);
        expect(statSync(join(d, 'journal.log')).size).toBe(lastStart);
        jj.transaction(tx(7)); // the truncated file takes new records cleanly
        jj.close();
        expect(Journal.read(d).lastTransactionID).toBe('7');
        checked++;
      }),
      { numRuns: full.length - lastStart, examples: [[lastStart], [full.length - 1]] },
    );
    console.log(
      `[journal] torn tail: checked ${checked} cut points in a last record of ${full.length - lastStart} bytes`,
    );
  });

  it('a corrupted byte inside the last record is detected by its checksum', () => {
    const dir = tmp();
    const j = Journal.open(dir);
    for (let i = 1; i <= 3; i++) j.transaction(tx(i));
    j.close();
    const p = join(dir, 'journal.log');
    const b = readFileSync(p);
    b[b.length - 5] = b[b.length - 5] === 0x31 ? 0x32 : 0x31;
    writeFileSync(p, b);
    expect(Journal.read(dir).lastTransactionID).toBe('2');
    truncateSync(p, 0);
  });

  it("property: any damage inside one record before the last (any bytes changed) is reported at that record's offset, and every other record is recovered", () => {
    const dir = tmp();
    const j = Journal.open(dir, { compactEvery: 1_000_000 });
    for (let i = 1; i <= 12; i++) j.transaction(tx(i));
    j.close();
    const full = readFileSync(join(dir, 'journal.log'));
    const starts = [0];
    for (let k = 0; k < 12; k++) starts.push(full.indexOf(0x0a, starts[k]!) + 1);
    let checked = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }),
        (k, flips) => {
          const b = Buffer.from(full);
          const from = starts[k]!;
          const len = starts[k + 1]! - from;
          for (const [at, x] of flips) b[from + (at % len)] = b[from + (at % len)]! ^ x;
          const { records, damaged } = parseFrames(b);
          // The stretch is the record with its line end. When the damage changed that line end itself,
          // whether the changed byte is counted with the damage or with the resync depends on what it
          // became (a digit can start the next frame's header): len - 1 or len.
          expect(damaged).toHaveLength(1);
          expect(damaged[0]).toMatchObject({ offset: from, recoveredAfter: 11 - k });
          if (b[from + len - 1] === 0x0a) expect(damaged[0]!.bytes).toBe(len);
          else expect([len - 1, len]).toContain(damaged[0]!.bytes);
          expect(records.map((r) => (r as { tx: { id: string } }).tx.id)).toEqual(
            Array.from({ length: 12 }, (_, i) => String(i + 1)).filter((id) => id !== String(k + 1)),
          );
          checked++;
        },
      ),
      { numRuns: 300 },
    );
    console.log(
      `[journal] damage in the middle: ${checked} random damages, each reported at its record's offset with the others recovered`,
    );
  });

  it('kill -9 of a writer at random moments keeps every record whose append returned', async () => {
    const dir = tmp();
    const writer = resolve(import.meta.dirname, 'journal-writer.ts');
    let acked = 0;
    const runs = 5;
    for (let run = 0; run < runs; run++) {
      const child = spawn(process.execPath, ['--import', 'tsx', writer, dir, '37'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
      });
      // Kill once the child has written something, then after a random extra delay.
      await new Promise<void>((res) => {
        const check = setInterval(() => {
          if (out.length > 0) {
            clearInterval(check);
            setTimeout(res, Math.floor(Math.random() * 150));
          }
        }, 5);
      });
      child.kill('SIGKILL');
      await new Promise((res) => child.on('exit', res));
      const ids = out.trim().split('\n').map(Number);
      const lastAcked = ids[ids.length - 1]!;
      const c = Journal.read(dir);
      const got = c.transactions.map((t) => Number(t.id));
      // Every acknowledged record is there, in order, without gaps (at most one unacknowledged extra).
      expect(got.slice(0, lastAcked)).toEqual(Array.from({ length: lastAcked }, (_, i) => i + 1));
      expect(got.length - lastAcked).toBeLessThanOrEqual(1);
      acked = lastAcked;
    }
    console.log(
      `[journal] kill -9: ${runs} kills, ${acked} records acknowledged in total, all present after reopen`,
    );
  }, 60_000);
});
