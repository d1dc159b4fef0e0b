import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { rolloverOfDay } from '../../domain/new-york.ts';
import { financingHistory, FinancingWriter, readFinancing, type FinancingRecord } from './financing-store.ts';

const DAYS = [
  { dayOfWeek: 'MONDAY', daysCharged: 1 },
  { dayOfWeek: 'TUESDAY', daysCharged: 1 },
  { dayOfWeek: 'WEDNESDAY', daysCharged: 3 },
  { dayOfWeek: 'THURSDAY', daysCharged: 1 },
  { dayOfWeek: 'FRIDAY', daysCharged: 1 },
];
const rec = (day: string, longRate: string, instrument = 'EUR_USD'): FinancingRecord => ({
  day,
  instrument,
  knownAt: Date.parse(`${day}T12:00:00Z`),
  longRate,
  shortRate: '0.0100',
  financingDaysOfWeek: DAYS,
  marginRate: '0.05',
});

let roots: string[] = [];
const fresh = (): string => {
  const r = mkdtempSync(join(tmpdir(), 'fxflow-financing-'));
  roots.push(r);
  return r;
};
afterEach(() => {
  for (const r of roots) rmSync(r, { recursive: true, force: true });
  roots = [];
});

describe('recorded financing', () => {
  it('each rollover uses the rates of its day, or the latest recorded before it (property over random recorded days)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 80 }),
        (offsets, probe) => {
          const root = fresh();
          const day = (k: number): string => new Date(Date.UTC(2024, 0, 2 + k)).toISOString().slice(0, 10);
          const w = FinancingWriter.open(root);
          // Written in any order; each day's rate is -k/10000.
          w.append(offsets.map((k) => rec(day(k), (-k / 10_000).toFixed(4))));
          const first = Math.min(...offsets);
          const h = financingHistory(root, ['EUR_USD'], rolloverOfDay(day(first)) - 3_600_000, 'static');
          const at = rolloverOfDay(day(probe));
          const got = h.rates('EUR_USD', at);
          const before = offsets.filter((k) => k <= probe);
          if (before.length === 0)
            expect(got).toBeUndefined(); // today's rates before the first day ('static')
          else expect(got!.longRate).toBe(Number((-Math.max(...before) / 10_000).toFixed(4)));
          expect(h.rates('GBP_USD', at)).toBeUndefined(); // not asked for: the instrument's own
        },
      ),
      { numRuns: 80 },
    );
  });

  it('the same day is not recorded twice, across a restart; a line cut short is dropped on open', () => {
    const root = fresh();
    const w = FinancingWriter.open(root);
    expect(w.append([rec('2024-01-02', '-0.0500'), rec('2024-01-02', '-0.0500', 'GBP_USD')]).length).toBe(2);
    expect(w.append([rec('2024-01-02', '-0.0400')]).length).toBe(0);
    appendFileSync(join(root, 'financing', '2024.jsonl'), '{"day":"2024-01-03","instrum');
    const w2 = FinancingWriter.open(root);
    expect(w2.repaired).toEqual([{ file: join(root, 'financing', '2024.jsonl'), bytes: 28 }]);
    expect(
      w2
        .append([rec('2024-01-02', '-0.0300'), rec('2024-01-03', '-0.0300'), rec('2025-01-02', '-0.0100')])
        .map((r) => r.day),
    ).toEqual(['2024-01-03', '2025-01-02']);
    expect(readFinancing(root).map((r) => `${r.day} ${r.instrument} ${r.longRate}`)).toEqual([
      '2024-01-02 EUR_USD -0.0500',
      '2024-01-02 GBP_USD -0.0500',
      '2024-01-03 EUR_USD -0.0300',
      '2025-01-02 EUR_USD -0.0100',
    ]);
    expect(readFileSync(join(root, 'financing', '2025.jsonl'), 'utf8').split('\n').length).toBe(2);
  });

  it('bad lines, a missing instrument and a run before the first day are errors naming the file, line or day', () => {
    const root = fresh();
    FinancingWriter.open(root).append([rec('2024-01-03', '-0.0500')]);
    const file = join(root, 'financing', '2024.jsonl');
    const good = readFileSync(file, 'utf8');
    expect(() => financingHistory(root, ['EUR_USD'], Date.UTC(2024, 0, 1), 'error')).toThrow(
      /the first recorded financing of EUR_USD is for trading day 2024-01-03, after the run's first trading day 2024-01-01: start the run on or after 2024-01-03 \(--from\), or pass --financing-before-history static/,
    );
    expect(() => financingHistory(root, ['USD_JPY'], Date.UTC(2024, 0, 5), 'error')).toThrow(
      /no recorded financing of USD_JPY \(the recording holds EUR_USD\): record it with fxflow record --instruments USD_JPY --financing/,
    );
    writeFileSync(file, `${good}${JSON.stringify({ ...rec('2024-01-04', '-0.05'), swap: 1 })}\n`);
    expect(() => readFinancing(root)).toThrow(
      /2024\.jsonl:2 \(swap\): unknown field in a financing record .*newer fxflow/,
    );
    writeFileSync(file, `${good}${JSON.stringify({ ...rec('2024-01-04', '-0.05'), longRate: -0.05 })}\n`);
    expect(() => readFinancing(root)).toThrow(
      /2024\.jsonl:2 \(longRate\): must be a decimal string like "-0\.0412" \(got -0\.05\)/,
    );
    writeFileSync(
      file,
      `${good}${JSON.stringify({ ...rec('2024-01-04', '-0.05'), financingDaysOfWeek: [{ dayOfWeek: 'FUNDAY', daysCharged: 1 }] })}\n`,
    );
    expect(() => readFinancing(root)).toThrow(/2024\.jsonl:2 \(financingDaysOfWeek\): must be a list of/);
    writeFileSync(file, `${good}${good}`);
    expect(() => readFinancing(root)).toThrow(
      /2024\.jsonl:2: EUR_USD on 2024-01-03 is recorded twice \(first at .*2024\.jsonl:1\)/,
    );
    writeFileSync(file, `${good}{"day":`);
    expect(readFinancing(root).length).toBe(1); // a cut last line (a recorder mid-write) is not a record
  });
});
