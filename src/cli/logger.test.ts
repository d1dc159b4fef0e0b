import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, flushLogger } from './logger.ts';

const tmp = mkdtempSync(join(tmpdir(), 'fxflow-logger-'));

describe('createLogger with a file', () => {
  afterEach(() => vi.restoreAllMocks());

  it('writes JSON lines to the file, tokens redacted, every line on disk once flushLogger resolves', async () => {
    const file = join(tmp, 'run', 'log.jsonl');
    const log = createLogger({ file });
    log.info({ token: 'secret-token-value', headers: { authorization: 'Bearer abc' } }, 'hello');
    // Enough lines that a write is still in flight when flushLogger is called (pino's own flush
    // called back at once then, and the file was read short).
    for (let i = 0; i < 20_000; i++) log.info({ i }, 'line');
    await flushLogger(log);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(20_001);
    const first = JSON.parse(lines[0]!) as { msg: string; token: string; headers: { authorization: string } };
    expect(first.msg).toBe('hello');
    expect(first.token).toBe('[redacted]');
    expect(first.headers.authorization).toBe('[redacted]');
    expect((JSON.parse(lines[20_000]!) as { i: number }).i).toBe(19_999);
  });

  it('a file that cannot be opened is said once on stderr, and the logger goes on writing nothing', async () => {
    const blocker = join(tmp, 'a-file');
    writeFileSync(blocker, 'x');
    const said: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      said.push(String(chunk));
      return true;
    });
    const log = createLogger({ file: join(blocker, 'log.jsonl') });
    log.info('dropped');
    log.warn('dropped too');
    await flushLogger(log);
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(
      /^fxflow: cannot write the log file .*a-file\/log\.jsonl \(E[A-Z]+\); going on without it\n$/,
    );
  });
});
