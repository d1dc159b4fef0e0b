import { createServer } from 'node:net';
import { get } from 'node:http';
import { describe, expect, it } from 'vitest';
import { startStatusServer, type StatusSnapshot } from './status-server.ts';

const snap = (nav: number): StatusSnapshot => ({
  at: '2024-01-01T00:00:00.000Z',
  strategy: 's',
  mode: 'sandbox',
  account: '•••-001',
  currency: 'USD',
  balance: nav,
  nav,
  unrealizedPL: 0,
  realizedPL: 0,
  marginUsed: 0,
  marginAvailable: nav,
  trades: [],
  positions: [],
  transactions: [],
  limits: [],
  killSwitch: { engaged: false, file: null, riskRefusals: 0 },
  streams: [],
});

describe('status server', () => {
  it('sends a snapshot at once, then only when it changes', async () => {
    let nav = 100;
    const srv = await startStatusServer({ port: 0, provider: { snapshot: () => snap(nav) }, everyMs: 10 });
    try {
      const events: number[] = [];
      let resolveSecond: () => void;
      const second = new Promise<void>((r) => (resolveSecond = r));
      const req = get(`${srv.url}events`, (res) => {
        expect(res.headers['content-type']).toBe('text/event-stream');
        let buf = '';
        res.on('data', (d: Buffer) => {
          buf += d.toString();
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            const data = block.split('\n').find((l) => l.startsWith('data: '));
            if (data) {
              events.push((JSON.parse(data.slice(6)) as StatusSnapshot).nav);
              if (events.length === 1) nav = 105; // the next tick sees a change
              if (events.length === 2) resolveSecond();
            }
          }
        });
      });
      await second;
      req.destroy();
      expect(events).toEqual([100, 105]);
    } finally {
      await srv.close();
    }
  });

  it('a port in use is one clear message naming it', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(startStatusServer({ port, provider: { snapshot: () => snap(1) } })).rejects.toThrow(
        `--status-port ${port}: cannot listen on 127.0.0.1:${port} (EADDRINUSE); choose another port, or 0 for any free one`,
      );
    } finally {
      blocker.close();
    }
  });
});
