import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareModel } from './compare.ts';

/** A run folder with what compare reads of it: summary.json (period, instruments traded) and equity.csv. */
function runFolder(root: string, name: string, from: string, to: string, instrument: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  const group = {
    trades: 1,
    wins: 1,
    losses: 0,
    winRate: 100,
    netPL: 5,
    profitFactor: null,
    spreadCost: 0,
    financing: 0,
    commission: 0,
  };
  writeFileSync(
    join(dir, 'summary.json'),
    JSON.stringify({
      strategy: name,
      params: {},
      summary: {
        currency: 'USD',
        from,
        to,
        initialBalance: 100_000,
        finalNAV: 100_005,
        netPL: 5,
        byInstrument: { [instrument]: group },
      },
    }),
  );
  writeFileSync(join(dir, 'equity.csv'), `time,balance,nav\n${from},100000,100000\n${to},100005,100005\n`);
  return dir;
}

describe('compareModel: like for like', () => {
  it('says when the runs cover different periods or trade different instruments, and nothing when they are alike', () => {
    const root = mkdtempSync(join(tmpdir(), 'fxflow-compare-'));
    const a = runFolder(root, 'a', '2024-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z', 'EUR_USD');
    const b = runFolder(root, 'b', '2023-01-01T00:00:00.000Z', '2024-01-01T00:00:00.000Z', 'USD_JPY');
    const c = runFolder(root, 'c', '2024-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z', 'EUR_USD');
    const m = compareModel([a, b]);
    expect(m.notes).toHaveLength(2);
    expect(m.notes[0]).toBe(
      'the runs cover different periods (1: 2024-01-01 → 2025-01-01; 2: 2023-01-01 → 2024-01-01): their returns and figures are not over the same market',
    );
    expect(m.notes[1]).toBe('the runs trade different instruments (1: EUR_USD; 2: USD_JPY)');
    expect(compareModel([a, c]).notes).toEqual([]);
  });
});
