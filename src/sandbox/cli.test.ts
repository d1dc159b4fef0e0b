import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxOptions } from '../cli/sandbox.ts';
import { call } from './testkit.ts';

const ROOT = resolve(import.meta.dirname, '../..');

describe('fxflow sandbox (CLI)', () => {
  it('prints the listening line, serves v20, and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, ['bin/fxflow.js', 'sandbox', '--port', '0', '--manual'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const url = await new Promise<string>((done, fail) => {
      const t = setTimeout(() => fail(new Error(`no listening line within 30 s; stdout: ${out}`)), 30_000);
      child.stdout.on('data', () => {
        const m = /fxflow sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) {
          clearTimeout(t);
          done(m[1]!);
        }
      });
    });
    const r = await call('GET', `${url}/v3/accounts`);
    expect(r.status).toBe(200);
    expect(r.body.accounts[0].id).toBe('101-001-0000001-001');
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('fxflow sandbox stopped');
  }, 40_000);

  it('--legacy-report FILE: at exit, each legacy call made, how often, its /v3 replacement and field mapping', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fxflow-legacy-'));
    const file = join(dir, 'migration.json');
    const child = spawn(
      process.execPath,
      ['bin/fxflow.js', 'sandbox', '--port', '0', '--manual', '--legacy-report', file],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    const url = await new Promise<string>((done, fail) => {
      const t = setTimeout(() => fail(new Error(`no listening line within 30 s; stdout: ${out}`)), 30_000);
      child.stdout.on('data', () => {
        const m = /fxflow sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m) {
          clearTimeout(t);
          done(m[1]!);
        }
      });
    });
    try {
      const accounts = await call('GET', `${url}/v1/accounts`);
      const id = accounts.body.accounts[0].accountId as number;
      await call('GET', `${url}/v1/accounts/${id}/trades`);
      await call('GET', `${url}/v1/accounts/${id}/trades`);
      expect((await call('GET', `${url}/v1/accounts/${id}/orders`)).headers.get('x-v3-replacement')).toMatch(
        /pendingOrders/,
      );
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const report = JSON.parse(readFileSync(file, 'utf8')) as {
        legacyCalls: { call: string; count: number; replacement: string; fields: Record<string, string> }[];
      };
      expect(report.legacyCalls.map((c) => [c.call, c.count])).toEqual([
        ['GET /v1/accounts/:account_id/trades', 2],
        ['GET /v1/accounts', 1],
        ['GET /v1/accounts/:account_id/orders', 1],
      ]);
      expect(report.legacyCalls[0]!.replacement).toMatch(/GET \/v3\/accounts\/\{accountID\}\/openTrades/);
      expect(report.legacyCalls[0]!.fields.takeProfit).toMatch(/takeProfitOrder\.price/);
      expect(out).toContain(`legacy /v1 migration report written to ${file}`);
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 40_000);

  it('reads the token from FXFLOW_SANDBOX_TOKEN only, and checks fault flags', () => {
    expect(() => sandboxOptions({ port: 0, requireToken: true }, {})).toThrow(/FXFLOW_SANDBOX_TOKEN/);
    expect(
      sandboxOptions({ port: 0, requireToken: true }, { FXFLOW_SANDBOX_TOKEN: 't0k' }).requireToken,
    ).toBe('t0k');
    expect(() => sandboxOptions({ port: 0, faultErrorRate: 2 }, {})).toThrow(/--fault-error-rate/);
    expect(sandboxOptions({ port: 0, marketHours: false }, {}).marketHours).toBe(false);
    expect(sandboxOptions({ port: 0 }, {}).marketHours).toBeUndefined();
    expect(() => sandboxOptions({ port: 0, faultSplit: 'half' }, {})).toThrow(/--fault-split/);
    const o = sandboxOptions({ port: 0, manual: true, faultSplit: '3', fault429: 2, faultStall: true }, {});
    expect(o.clock).toBe('manual');
    expect(o.faults).toEqual({ splitLines: 3, rateLimitBurst: 2, stallHeartbeats: true });
    expect(sandboxOptions({ port: 0, keepTransactions: 500 }, {}).keepTransactions).toBe(500);
    expect(() => sandboxOptions({ port: 0, keepTransactions: 0 }, {})).toThrow(/--keep-transactions/);
  });

  it('--slippage, --latency, --latency-timeout: the fill models, checked with the flag named', () => {
    expect(
      sandboxOptions({ port: 0, slippage: 'spread:0.5', latency: 'fixed:250', latencyTimeout: 2000 }, {})
        .fill,
    ).toEqual({ slippage: 'spread:0.5', latency: 'fixed:250', latencyTimeoutMs: 2000 });
    expect(sandboxOptions({ port: 0 }, {}).fill).toBeUndefined();
    expect(() => sandboxOptions({ port: 0, slippage: 'fixed' }, {})).toThrow(
      /^--slippage must be none, fixed:<pips>/,
    );
    expect(() => sandboxOptions({ port: 0, latency: 'file:/nonexistent/delays.txt' }, {})).toThrow(
      /^--latency file \/nonexistent\/delays\.txt: cannot be read/,
    );
    expect(() => sandboxOptions({ port: 0, latency: 'fixed:10', latencyTimeout: -1 }, {})).toThrow(
      /--latency-timeout/,
    );
  });

  it('fxflow sandbox --slippage fixed:1: a market order through the process fills a pip worse', async () => {
    const child = spawn(
      process.execPath,
      [
        'bin/fxflow.js',
        'sandbox',
        '--port',
        '0',
        '--manual',
        '--slippage',
        'fixed:1',
        '--start',
        '2024-01-03T10:00:00Z',
      ],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    try {
      const url = await new Promise<string>((done, fail) => {
        const t = setTimeout(() => fail(new Error(`no listening line within 30 s; stdout: ${out}`)), 30_000);
        child.stdout.on('data', () => {
          const m = /fxflow sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m && out.includes('fill models')) {
            clearTimeout(t);
            done(m[1]!);
          }
        });
      });
      expect(out).toContain('fill models: slippage fixed:1 · latency none');
      await call('POST', `${url}/sandbox/prices`, { instrument: 'EUR_USD', bid: '1.10000', ask: '1.10020' });
      const r = await call('POST', `${url}/v3/accounts/101-001-0000001-001/orders`, {
        order: { type: 'MARKET', instrument: 'EUR_USD', units: '100' },
      });
      expect(r.body.orderFillTransaction.price).toBe('1.10030');
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 40_000);
});
