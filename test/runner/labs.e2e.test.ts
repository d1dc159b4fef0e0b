import { afterEach, describe, expect, it } from 'vitest';
import { V20Labs } from '../../src/adapters/v20/labs.ts';
import type { CalendarEvent, SignalEvent } from '../../src/domain/events.ts';
import { defineStrategy } from '../../src/strategy/api.ts';
import { rig, until, type Rig } from './harness.ts';

/**
 * `fxflow run` with a strategy that subscribes to labs: the runner polls the sandbox's labs
 * endpoints, delivers each item once, and a restart on the same journal delivers nothing again.
 */

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const seen: (CalendarEvent | SignalEvent)[] = [];
const watcher = defineStrategy({
  name: 'labs-watcher',
  description: 'keeps the labs events it gets',
  params: {},
  subscribe: () => ({ ticks: ['EUR_USD'], calendar: ['USD', 'EUR'], signals: ['EUR_USD'] }),
  init: () => ({}),
  onCalendar(ctx, s) {
    seen.push(ctx.calendar!);
    return { state: s };
  },
  onSignal(ctx, s) {
    seen.push(ctx.signal!);
    return { state: s };
  },
});

const id = (e: CalendarEvent | SignalEvent): string => (e.kind === 'calendar' ? `cal|${e.currency}|${e.releaseAt}|${e.title}|${e.actual ?? ''}` : `sig|${e.instrument}|${String(e.data!.id)}`);

describe('labs in fxflow run', () => {
  it('delivers each labs item once, counts polls and items, and a restart delivers nothing again', { timeout: 60_000 }, async () => {
    seen.length = 0;
    r = await rig({ clock: 'manual', start: Date.UTC(2024, 0, 2, 12) });
    const opts = { strategy: watcher as never, name: 'labs-watcher', params: {}, labs: new V20Labs(r.http), labsPoll: { every: { calendar: 30, signals: 30 }, tickMs: 20 } };
    const first = r.runner(opts);
    await first.start();
    await until(() => first.labsPoller!.stats.polls >= 4 && seen.length > 0, 'labs events in the first run');
    const firstSeen = seen.map(id);
    expect(new Set(firstSeen).size).toBe(firstSeen.length);
    expect(first.labsPoller!.stats).toMatchObject({ failures: 0, items: firstSeen.length });
    for (const e of seen) if (e.kind === 'calendar') expect(['USD', 'EUR']).toContain(e.currency);
    else expect(e.instrument).toBe('EUR_USD');
    await first.stop('restart');

    const second = r.runner(opts);
    await second.start();
    await until(() => second.labsPoller!.stats.polls >= 4, 'polls in the second run');
    expect(seen.map(id)).toEqual(firstSeen);
    expect(second.labsPoller!.stats.items).toBe(0);
    // A day later on the sandbox: only what is new.
    r.sandbox.advance(86_400_000);
    await until(() => second.labsPoller!.stats.items > 0, 'new labs items a day later');
    const all = seen.map(id);
    expect(new Set(all).size).toBe(all.length);
    await second.stop('end');
  });

  it('a sandbox replaying at speed 120: every calendar release reaches the strategy once, within one poll interval (60 s, plus the poller tick) of its sandbox time', { timeout: 90_000 }, async () => {
    const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'AUD', 'CAD', 'CHF', 'NZD'];
    const got: { e: CalendarEvent; sandboxAt: number }[] = [];
    const calendarOnly = defineStrategy({
      name: 'calendar-watcher',
      params: {},
      subscribe: () => ({ ticks: ['EUR_USD'], calendar: CURRENCIES }),
      init: () => ({}),
      onCalendar(ctx, s) {
        // The test notes the sandbox's time as the strategy hears it (a side channel of the test, not of the strategy).
        got.push({ e: ctx.calendar!, sandboxAt: r!.sandbox.time() });
        return { state: s };
      },
    });
    const start = Date.UTC(2024, 0, 2, 0, 50);
    r = await rig({ clock: 'replay', speed: 120, start });
    const every = 60_000;
    // The sandbox has no rate limit of OANDA's: the budget lets the poller tick as often as speed 120 needs.
    const runner = r.runner({ strategy: calendarOnly as never, name: 'calendar-watcher', params: {}, labs: new V20Labs(r.http), labsPoll: { every: { calendar: every }, requestsPerMinute: 1200 } });
    await runner.start();
    const from = r.sandbox.time();
    const span = 80 * 60_000; // 80 sandbox minutes: 40 s of wall time
    // Waits on the sandbox's clock as it runs.
    await until(() => r!.sandbox.time() >= from + span + 3 * every, 'the sandbox clock past the span', 80_000);
    await runner.stop('end');
    const truth = (await (await fetch(`${r.sandbox.url}/labs/v1/calendar?period=86400`)).json()) as { timestamp: number; currency: string; title: string }[];
    const released = truth.filter((e) => e.timestamp * 1000 > from && e.timestamp * 1000 <= from + span && CURRENCIES.includes(e.currency));
    expect(released.length).toBeGreaterThan(0);
    const late: number[] = [];
    for (const e of released) {
      const seenIt = got.filter((g) => g.e.releaseAt === e.timestamp * 1000 && g.e.currency === e.currency && g.e.title === e.title);
      expect(seenIt, `${e.currency} ${e.title}`).toHaveLength(1);
      late.push(seenIt[0]!.sandboxAt - e.timestamp * 1000);
    }
    console.log(`[labs at speed 120] ${released.length} releases; heard by the strategy ${late.map((x) => `${x / 1000} s`).join(', ')} of sandbox time after their release`);
    // A release just after a poll waits for the next: one poll interval, plus at most the poller's
    // tick on the sandbox's clock (half an interval) between checks of what is due.
    for (const x of late) {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThanOrEqual(every * 1.5);
    }
  });
});
