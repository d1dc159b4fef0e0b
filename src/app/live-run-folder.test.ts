import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { liveRunFolder, openLiveRunFolder } from './live-run-folder.ts';

const meta = {
  fxflow: 'test',
  strategy: { file: 'x.ts', name: 's', sha256: 'h' },
  params: {},
  env: 'sandbox',
  accountID: 'A',
  broker: 'v20' as const,
  subscriptions: { candles: [], ticks: [], signals: [], calendar: [] },
  config: {},
};

describe('the run folder of fxflow run', () => {
  it("a new folder per start (-2 when one of that second exists), the journal's folder again on a restart, a new one with --new-journal, --out always", async () => {
    const runs = mkdtempSync(join(tmpdir(), 'fxflow-runs-'));
    const journal = join(runs, 'journal');
    const now = Date.UTC(2025, 0, 2, 10, 0, 0);
    const a = liveRunFolder({
      runsDir: runs,
      journalDir: journal,
      newJournal: false,
      name: 'sma',
      env: 'practice',
      now,
    });
    expect(a).toBe(join(runs, 'live', '20250102T100000Z-sma-practice'));
    // Nothing is created until the recording starts (after the journal's lock is held).
    const rec = openLiveRunFolder(a, journal, { meta });
    expect([existsSync(a), existsSync(join(journal, 'run-folder'))]).toEqual([false, false]);
    // Recording into `a` creates it and remembers it in the journal directory: the next start continues it.
    rec.start({
      runId: 'r',
      clientIdPrefix: 's-r',
      sequence: 0,
      restoredState: false,
      account: { broker: 'sim', currency: 'USD', marginRate: '0.02', hedging: false, deposit: '1000' },
    });
    await rec.stop('end');
    expect(
      liveRunFolder({
        runsDir: runs,
        journalDir: journal,
        newJournal: false,
        name: 'sma',
        env: 'practice',
        now,
      }),
    ).toBe(a);
    expect(
      liveRunFolder({
        runsDir: runs,
        journalDir: journal,
        newJournal: true,
        name: 'sma',
        env: 'practice',
        now,
      }),
    ).toBe(`${a}-2`);
    expect(
      liveRunFolder({
        runsDir: runs,
        journalDir: journal,
        newJournal: false,
        name: 'sma',
        env: 'practice',
        now: now + 60_000,
      }),
    ).toBe(a);
    expect(
      liveRunFolder({
        runsDir: runs,
        journalDir: journal,
        newJournal: true,
        name: 'sma',
        env: 'practice',
        now: now + 60_000,
      }),
    ).toBe(join(runs, 'live', '20250102T100100Z-sma-practice'));
    expect(
      liveRunFolder({
        out: join(runs, 'mine'),
        runsDir: runs,
        journalDir: journal,
        newJournal: false,
        name: 'sma',
        env: 'practice',
      }),
    ).toBe(join(runs, 'mine'));
    expect(existsSync(join(journal, 'run-folder'))).toBe(true);
  });

  it('a folder of another run (another account, strategy or environment) is not continued: the message names both', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-other-run-'));
    const journal = mkdtempSync(join(tmpdir(), 'fxflow-other-journal-'));
    writeFileSync(join(dir, 'run.json'), JSON.stringify({ ...meta, format: 1, sessions: [] }));
    expect(() => openLiveRunFolder(dir, journal, { meta: { ...meta, accountID: 'B' } })).toThrow(
      `run folder ${dir} holds a run of s on sandbox account A (run.json); this run is s on sandbox account B: give --out another folder (or none, for a new one)`,
    );
    expect(existsSync(join(journal, 'run-folder'))).toBe(false);
  });
});
