import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { zip } from './zip.ts';

/** Whether the system's unzip is installed (the test then checks the archive with it too). */
function hasUnzip(): boolean {
  try {
    execFileSync('unzip', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    console.warn('unzip is not installed: zip.test.ts checks the archive layout only');
    return false;
  }
}

describe('the hand-written zip container', () => {
  it('several entries (empty, text, binary, UTF-8 name) that unzip tests and extracts byte for byte', async () => {
    const binary = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7919) % 251));
    const entries = [
      { name: 'empty.json', data: Buffer.alloc(0), time: Date.UTC(2024, 0, 2, 13, 45, 30) },
      {
        name: 'transactions.json',
        data: Buffer.from(
          JSON.stringify(
            Array.from({ length: 500 }, (_, i) => ({ id: i, type: 'ORDER_FILLED', price: 1.1 + i / 1e5 })),
          ),
        ),
        time: Date.UTC(2024, 0, 2),
      },
      { name: 'bytes.bin', data: binary, time: Date.UTC(1970, 0, 1) },
      { name: 'prix-€.txt', data: Buffer.from('€ 1.10852\n'), time: Date.UTC(2030, 5, 1) },
    ];
    const buf = await zip(entries);
    // End of central directory: 4 entries, the directory right after the last file.
    const end = buf.length - 22;
    expect(buf.readUInt32LE(end)).toBe(0x06054b50);
    expect(buf.readUInt16LE(end + 8)).toBe(4);
    expect(buf.readUInt32LE(end + 16) + buf.readUInt32LE(end + 12)).toBe(end);
    // JSON compresses: the archive is smaller than its content.
    expect(buf.length).toBeLessThan(entries.reduce((n, e) => n + e.data.length, 0));
    if (!hasUnzip()) return;
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-zip-'));
    try {
      const file = join(dir, 'a.zip');
      writeFileSync(file, buf);
      expect(execFileSync('unzip', ['-t', file], { encoding: 'utf8' })).toMatch(/No errors detected/);
      // unzip matches names as patterns in the C locale: the UTF-8 name by a wildcard.
      for (const e of entries)
        expect(
          execFileSync('unzip', ['-p', file, e.name.replace(/[^\x20-\x7e]+/g, '*')]).equals(e.data),
          e.name,
        ).toBe(true);
      // The DOS time of the first entry: 2024-01-02 13:45:30.
      expect(execFileSync('unzip', ['-Z', '-T', file], { encoding: 'utf8' })).toMatch(
        /20240102\.134530 empty\.json/,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
