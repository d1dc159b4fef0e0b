import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { gunzipSync, gzipSync as gzipSyncOf } from 'node:zlib';
import { InputRecorder, type SessionStart, storedGzip } from './input-recorder.ts';
import { inputFiles, readInputs, readRunMeta, type InputRecord } from './recording.ts';

const meta = {
  fxflow: 'test',
  strategy: { file: 's.ts', name: 's', sha256: 'h' },
  params: {},
  env: 'sandbox',
  accountID: 'A',
  broker: 'v20' as const,
  subscriptions: { candles: [], ticks: ['EUR_USD'], signals: [], calendar: [] },
  config: {},
};
const session: SessionStart = {
  runId: 'r1',
  clientIdPrefix: 's-r1',
  sequence: 0,
  restoredState: false,
  account: { broker: 'sim', currency: 'USD', marginRate: '0.02', hedging: false, deposit: '100000' },
};

async function readAll(dir: string): Promise<{ recs: InputRecord[]; messages: string[] }> {
  const recs: InputRecord[] = [];
  const p = await readInputs(dir, inputFiles(dir, readRunMeta(dir)).files, (r) => recs.push(r));
  return { recs, messages: p.messages };
}

describe('the input recorder', () => {
  it('what is recorded is read back exactly, in order, across rotated files and sessions (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.array(
            fc.record({
              at: fc.integer({ min: 1_700_000_000_000, max: 1_800_000_000_000 }),
              bid: fc.integer({ min: 50_000, max: 200_000 }),
              intent: fc.boolean(),
            }),
            { maxLength: 60 },
          ),
          { minLength: 1, maxLength: 3 },
        ),
        fc.integer({ min: 200, max: 5000 }),
        async (sessions, rotate) => {
          const dir = mkdtempSync(join(tmpdir(), 'fxflow-rec-prop-'));
          const expected: unknown[] = [];
          for (const ticks of sessions) {
            const rec = new InputRecorder({ dir, meta, rotateBytes: rotate, bufferChars: 300 });
            rec.start(session);
            for (const t of ticks) {
              const bid = t.bid / 1e5;
              rec.tick('EUR_USD', t.at, bid, bid + 0.00015, 1);
              expected.push(['tick', t.at, bid, bid + 0.00015]);
              if (t.intent) {
                rec.intent({ kind: 'cancel', id: `x-${t.at}`, orderSpecifier: '7' }, t.at, 1);
                expected.push(['intent', `x-${t.at}`]);
              }
            }
            await rec.stop('end');
          }
          const { recs, messages } = await readAll(dir);
          expect(messages).toEqual([]);
          expect(recs.map((r) => r.seq)).toEqual(recs.map((_, i) => i + 1));
          const got = recs.flatMap((r) =>
            r.k === 'tick' ? [['tick', r.t, r.b, r.a]] : r.k === 'intent' ? [['intent', r.intent.id]] : [],
          );
          expect(got).toEqual(expected);
          expect(recs.filter((r) => r.k === 'session')).toHaveLength(2 * sessions.length);
        },
      ),
      { numRuns: 25 },
    );
  });

  it("a stored gzip member (an intent's flush) is read back exactly, alone and between compressed ones, whatever its size (fast-check)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 140_000 }), fc.string(), (bytes, text) => {
        const data = Buffer.from(bytes);
        expect(gunzipSync(storedGzip(data)).equals(data)).toBe(true);
        const mixed = Buffer.concat([gzipSyncOf(text), storedGzip(data), gzipSyncOf(text)]);
        expect(gunzipSync(mixed).equals(Buffer.concat([Buffer.from(text), data, Buffer.from(text)]))).toBe(
          true,
        );
      }),
      { numRuns: 30 },
    );
    // The block boundaries (a stored block holds at most 65,535 bytes).
    for (const n of [0, 65_535, 65_536, 140_000]) {
      const data = Buffer.alloc(n, 'x');
      expect(gunzipSync(storedGzip(data)).equals(data)).toBe(true);
    }
  });

  it('a transactions.jsonl torn by a kill: the next session cuts the fragment off, and what the account fills in (backfill) follows whole lines after the last whole transaction', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-rec-torn-'));
    const tx = (id: number): string =>
      JSON.stringify({ id: String(id), type: 'DAILY_FINANCING', time: '2024-01-02T10:00:00.000000000Z' });
    const v20Session: SessionStart = {
      ...session,
      account: {
        broker: 'v20',
        currency: 'USD',
        marginRate: '0.02',
        hedging: false,
        lastTransactionID: '2',
        balance: '100000',
        pl: '0',
        financing: '0',
        commission: '0',
        guaranteedExecutionFees: '0',
        trades: [],
        orders: [],
      } as never,
    };
    const first = new InputRecorder({ dir, meta });
    first.start(v20Session);
    await first.stop('end');
    writeFileSync(join(dir, 'transactions.jsonl'), `${tx(3)}\n${tx(4)}\n${tx(5).slice(0, 20)}`);
    const rec = new InputRecorder({ dir, meta });
    expect(rec.lastTransactionID).toBe(4);
    rec.start(v20Session);
    expect(rec.missingBefore(6)).toBe(4);
    expect(rec.backfill([3, 4, 5, 6].map((id) => JSON.parse(tx(id)) as never))).toBe(2);
    expect(rec.missingBefore(6)).toBeUndefined();
    await rec.stop('end');
    expect(
      readFileSync(join(dir, 'transactions.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => (JSON.parse(l) as { id: string }).id),
    ).toEqual(['3', '4', '5', '6']);
  });

  it('the size cap: a warning once, a capped record, nothing more but the stop marker; run.json says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-rec-cap-'));
    const warnings: string[] = [];
    const rec = new InputRecorder({
      dir,
      meta,
      maxBytes: 4000,
      bufferChars: 500,
      onWarn: (m) => warnings.push(m),
    });
    rec.start(session);
    for (let i = 0; i < 500; i++) rec.tick('EUR_USD', 1_704_189_600_000 + i * 1000, 1.1, 1.10015, i);
    await rec.stop('end');
    const { recs } = await readAll(dir);
    const m = readRunMeta(dir);
    console.log(
      `[recorder cap] ${warnings[0]}; ${recs.filter((r) => r.k === 'tick').length} of 500 ticks kept`,
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /reached its cap of 4000 bytes \(--record-max-mb\) and stops here; the run goes on/,
    );
    expect(rec.capped).toBe(true);
    const capped = recs.findIndex((r) => r.k === 'capped');
    expect(capped).toBeGreaterThan(0);
    expect(recs.slice(capped + 1).map((r) => r.k)).toEqual(['session']);
    expect(recs.filter((r) => r.k === 'tick').length).toBeLessThan(60);
    expect(m.sessions[0]!.capped).toBe(true);
    expect(readdirSync(dir).filter((f) => f.startsWith('inputs-'))).toHaveLength(1);
  });
});
