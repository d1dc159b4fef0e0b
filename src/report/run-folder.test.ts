import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ReportError,
  readEquity,
  readRunFolder,
  readTransactions,
  readTransactionsFrom,
} from './run-folder.ts';

const dir = (): string => mkdtempSync(join(tmpdir(), 'fxflow-runfolder-'));
const tx = (id: number, type = 'ORDER_FILL'): string =>
  JSON.stringify({ id: String(id), type, time: '2024-01-02T00:00:00.000000000Z' });

describe('readTransactions', () => {
  it('reads a file far larger than its 64 KiB chunks line by line: every transaction once, in order, multibyte text across chunk edges intact', () => {
    const d = dir();
    const f = join(d, 'transactions.jsonl');
    const lines: string[] = [];
    for (let i = 1; i <= 3000; i++)
      lines.push(
        JSON.stringify({
          id: String(i),
          type: i % 2 ? 'ORDER_FILL' : 'MARKET_ORDER',
          time: '2024-01-02T00:00:00.000000000Z',
          comment: `€ ${'é'.repeat(i % 37)} ✓`,
        }),
      );
    writeFileSync(f, `${lines.join('\n')}\n`);
    const w: string[] = [];
    const all = readTransactions(f, w);
    expect(w).toEqual([]);
    expect(all.map((t) => t.id)).toEqual(lines.map((_, i) => String(i + 1)));
    expect(all.map((t) => t.comment)).toEqual(
      lines.map((l) => (JSON.parse(l) as { comment: string }).comment),
    );
    const fills = readTransactionsFrom(f, [], (type) => type === 'ORDER_FILL');
    expect(fills.count).toBe(3000);
    expect(fills.kept).toHaveLength(1500);
  });

  it('a last line cut short is a truncated file; a bad line inside is skipped and named; a gap in IDs is said', () => {
    const d = dir();
    const f = join(d, 'transactions.jsonl');
    writeFileSync(f, `${tx(1)}\n${tx(2)}\n${tx(3).slice(0, 20)}`);
    const w1: string[] = [];
    expect(readTransactions(f, w1).map((t) => t.id)).toEqual(['1', '2']);
    expect(w1).toEqual([
      'transactions.jsonl is truncated: its last line (line 3) is cut short, so the figures drawn from transactions stop at transaction 2; summary.json may count more',
    ]);
    writeFileSync(f, `${tx(1)}\nnot json\n${tx(3)}\n`);
    const w2: string[] = [];
    expect(readTransactions(f, w2).map((t) => t.id)).toEqual(['1', '3']);
    expect(w2).toEqual([
      'transactions.jsonl line 2 is not a v20 transaction (needs id, type and time): skipped',
      'transactions.jsonl jumps from transaction 1 to 3: transactions are missing',
    ]);
  });
});

describe('readEquity', () => {
  it('reads columns by their header names, in any order, with extra columns', () => {
    const d = dir();
    writeFileSync(
      join(d, 'e.csv'),
      'nav,extra,time,balance\n101,x,2024-01-01T00:00:00.000Z,100\n102.5,y,2024-01-02T00:00:00.000Z,101\n',
    );
    expect(readEquity(join(d, 'e.csv'), [])).toEqual({
      t: [1704067200, 1704153600],
      balance: [100, 101],
      nav: [101, 102.5],
    });
  });
});

describe('readRunFolder', () => {
  it('names what is not a run folder and how to find one', () => {
    const d = dir();
    expect(() => readRunFolder(d)).toThrow(ReportError);
    expect(() => readRunFolder(d)).toThrow(`${d} is not an fxflow run folder`);
    writeFileSync(join(d, 'x'), '');
    expect(() => readRunFolder(join(d, 'x'))).toThrow('is a file, not a run folder');
  });

  it('a folder with transactions only (an interrupted run) is read, with every missing file said', () => {
    const d = dir();
    writeFileSync(join(d, 'transactions.jsonl'), `${tx(1, 'CREATE')}\n`);
    const f = readRunFolder(d);
    expect(f.transactionCount).toBe(1);
    expect(f.folded.fills).toHaveLength(0); // a CREATE: counted, not folded (the report reads fills, exits, financing and transfers)
    expect(f.folded.trades).toHaveLength(0);
    expect(f.warnings.join('\n')).toMatch(
      /summary\.json is missing[\s\S]*config\.json is missing[\s\S]*equity\.csv is missing[\s\S]*chart-candles\.json is missing/,
    );
  });
});
