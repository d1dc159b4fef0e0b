/** The sandbox's own control routes (/sandbox/...): time, prices, faults, financing, stats. Never faulted. */
import { formatTime, parseRequestTime } from '../../domain/time.ts';
import { FaultError, type FaultOptions } from '../faults.ts';
import { HttpError, objectBody, ok, type On, type V3Context } from './context.ts';

const DAY_MS = 86_400_000;
/** The control endpoints move the clock no further than this (the simulator charges financing per day). */
const MAX_CONTROL_TIME = Date.UTC(2200, 0, 1);

/** A control time: epoch ms (a number or digits) or RFC 3339; NaN when it is neither. */
export const controlTime = (v: unknown): number => {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return /^\d+$/.test(v) ? Number(v) : parseRequestTime(v);
  return Number.NaN;
};

/** Mounts the /sandbox control routes on `on`. */
export function controlRoutes(c: V3Context, on: On): void {
  const { accounts, faults, financing, setFinancing, setFaults, setTime, tick, stats, loopDelay, slowest } =
    c;
  /**
   * Moves the clock to `ms` a simulated day at a time, yielding to the event loop between days: a
   * jump of years (each day may charge financing, expire orders) never blocks other requests.
   */
  const advanceTo = async (ms: number, field: string): Promise<void> => {
    if (!Number.isFinite(ms))
      throw new HttpError(400, `Invalid value specified for '${field}': give RFC 3339 or epoch ms`);
    if (ms > MAX_CONTROL_TIME)
      throw new HttpError(
        400,
        `Invalid value specified for '${field}': ${formatTime(Math.min(ms, 8.64e15))} is past ${formatTime(MAX_CONTROL_TIME)}, the latest time the sandbox clock accepts`,
      );
    while (ms - c.now() > DAY_MS) {
      setTime(c.now() + DAY_MS);
      await new Promise<void>((done) => setImmediate(done));
    }
    setTime(ms);
  };
  on('POST', '/sandbox/time', async (r) => {
    await advanceTo(controlTime(objectBody(r.body, 'the body').time), 'time');
    return ok({ time: formatTime(c.now()) });
  });
  on('POST', '/sandbox/advance', async (r) => {
    const ms = objectBody(r.body, 'the body').ms;
    if (typeof ms !== 'number' || !(ms >= 0))
      throw new HttpError(400, "Invalid value specified for 'ms': a number of milliseconds >= 0");
    await advanceTo(c.now() + ms, 'ms');
    return ok({ time: formatTime(c.now()) });
  });
  on('POST', '/sandbox/prices', async (r) => {
    const list = Array.isArray(r.body) ? r.body : [r.body];
    for (const [i, p] of list.entries()) {
      const o = objectBody(p, `price #${i}`);
      const num = (k: string): number => {
        const v = o[k];
        const x = typeof v === 'string' ? Number(v) : v;
        if (typeof x !== 'number' || !Number.isFinite(x))
          throw new HttpError(400, `Invalid value specified for '${k}' (price #${i}): a number`);
        return x;
      };
      if (typeof o.instrument !== 'string')
        throw new HttpError(
          400,
          `Invalid value specified for 'instrument' (price #${i}): a name like EUR_USD`,
        );
      const bid = num('bid');
      const ask = num('ask');
      const liquidity = o.liquidity !== undefined ? num('liquidity') : undefined;
      if (o.time !== undefined) await advanceTo(controlTime(o.time), 'time');
      tick({ instrument: o.instrument, bid, ask, ...(liquidity !== undefined ? { liquidity } : {}) });
    }
    return ok({ time: formatTime(c.now()), prices: list.length });
  });
  on('POST', '/sandbox/faults', (r) => {
    try {
      setFaults(objectBody(r.body, 'the body') as FaultOptions, true);
    } catch (e) {
      if (e instanceof FaultError) throw new HttpError(400, e.message);
      throw e;
    }
    return ok({ faults: faults.opts });
  });
  on('POST', '/sandbox/financing', (r) => {
    const b = objectBody(r.body, 'the body');
    if (typeof b.instrument !== 'string')
      throw new HttpError(400, "Invalid value specified for 'instrument': a name like EUR_USD");
    setFinancing(b.instrument, { longRate: b.longRate as string, shortRate: b.shortRate as string });
    return ok({ instrument: b.instrument, financing: financing.get(b.instrument) });
  });
  on('GET', '/sandbox/stats', (r) => {
    const m = process.memoryUsage();
    const delay = { max: loopDelay.max / 1e6, p99: loopDelay.percentile(99) / 1e6 };
    // ?reset=true starts a new event-loop delay window (a load run measures one phase at a time).
    const slowestHandler = { ms: slowest.ms, cpuMs: slowest.cpuMs, request: slowest.request };
    if (r.url.searchParams.get('reset') === 'true') {
      loopDelay.reset();
      slowest.ms = 0;
      slowest.cpuMs = 0;
      slowest.request = '';
    }
    return ok({
      ...stats(),
      time: formatTime(c.now()),
      // The process's memory and the event loop's worst delay since the start: what a load run watches.
      memory: { rssBytes: m.rss, heapUsedBytes: m.heapUsed },
      eventLoopDelayMs: delay,
      slowestHandler,
      transactions: Object.fromEntries(
        [...accounts].map(([id, a]) => [
          id,
          {
            kept: a.transactions.length,
            oldestID: String(a.transactions.oldestID),
            lastID: String(a.transactions.lastID),
          },
        ]),
      ),
    });
  });
}
