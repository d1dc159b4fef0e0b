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
});
