import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { V20Labs } from '../../src/adapters/v20/labs.ts';
import type { CalendarEvent, SignalEvent } from '../../src/domain/events.ts';
import type { LabsEndpoints } from '../../src/runner/session/labs-poller.ts';
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

const id = (e: CalendarEvent | SignalEvent): string =>
  e.kind === 'calendar'
    ? `cal|${e.currency}|${e.releaseAt}|${e.title}|${e.actual ?? ''}`
    : `sig|${e.instrument}|${String(e.data!.id)}`;

describe('labs in fxflow run', () => {
  it(
    'delivers each labs item once, counts polls and items, and a restart delivers nothing again',
    { timeout: 60_000 },
    async () => {
      seen.length = 0;
      r = await rig({ clock: 'manual', start: Date.UTC(2024, 0, 2, 12) });
      const opts = {
        strategy: watcher as never,
        name: 'labs-watcher',
        params: {},
        labs: new V20Labs(r.http),
        labsPoll: { every: { calendar: 30, signals: 30 }, tickMs: 20 },
      };
      const first = r.runner(opts);
      await first.start();
      await until(
        () => first.labsPoller!.stats.polls >= 4 && seen.length > 0,
        'labs events in the first run',
      );
      const firstSeen = seen.map(id);
      expect(new Set(firstSeen).size).toBe(firstSeen.length);
      expect(first.labsPoller!.stats).toMatchObject({ failures: 0, items: firstSeen.length });
      for (const e of seen)
        if (e.kind === 'calendar') expect(['USD', 'EUR']).toContain(e.currency);
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
    },
  );

  it(
    'a sandbox replaying at speed 120: each calendar poll is sent when due on the sandbox clock, and every release reaches the strategy once, within one poll interval (60 s) plus the round trip of its sandbox time',
    { timeout: 90_000 },
    async () => {
      const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'AUD', 'CAD', 'CHF', 'NZD'];
      const SPEED = 120;
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
      r = await rig({ clock: 'replay', speed: SPEED, start });
      const every = 60_000;
      // The real labs client, its calendar requests noted on the sandbox's clock: sent, and answered.
      const client = new V20Labs(r.http);
      const asked: { sent: number; answered: number }[] = [];
      const labs: LabsEndpoints = {
        calendarEntries: async (instrument, period) => {
          const sent = r!.sandbox.time();
          try {
            return await client.calendarEntries(instrument, period);
          } finally {
            asked.push({ sent, answered: r!.sandbox.time() });
          }
        },
        autochartist: (o) => client.autochartist(o),
        spreads: (instrument, period) => client.spreads(instrument, period),
        commitmentsOfTraders: (instrument) => client.commitmentsOfTraders(instrument),
        serverTime: () => client.serverTime(),
      };
      // How late this process's timers fire (a loaded machine): the poller's timer is one of them.
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      // The sandbox has no rate limit of OANDA's: the budget lets the poller poll as often as speed 120 needs.
      const runner = r.runner({
        strategy: calendarOnly as never,
        name: 'calendar-watcher',
        params: {},
        labs,
        labsPoll: { every: { calendar: every }, requestsPerMinute: 1200 },
      });
      await runner.start();
      const from = r.sandbox.time();
      const span = 80 * 60_000; // 80 sandbox minutes: 40 s of wall time
      // Waits on the sandbox's clock as it runs.
      await until(
        () => r!.sandbox.time() >= from + span + 3 * every,
        'the sandbox clock past the span',
        80_000,
      );
      await runner.stop('end');
      loop.disable();
      // The rate is read from the answers' Date headers (whole seconds) against this process's clock, so
      // on a loaded machine the estimate wanders: it must find the sandbox running far faster than real
      // time and near its speed; the schedule's checks below use the rate and delays this run measured.
      expect(runner.labsPoller!.serverRate).toBeGreaterThan(SPEED * 0.75);
      expect(runner.labsPoller!.serverRate).toBeLessThan(SPEED * 1.25);
      const truth = (await (await fetch(`${r.sandbox.url}/labs/v1/calendar?period=86400`)).json()) as {
        timestamp: number;
        currency: string;
        title: string;
      }[];
      const released = truth.filter(
        (e) =>
          e.timestamp * 1000 > from && e.timestamp * 1000 <= from + span && CURRENCIES.includes(e.currency),
      );
      expect(released.length).toBeGreaterThan(0);

      // What the schedule may add to an interval, each measured in this run, in sandbox ms: the longest
      // request (sent to answered); the event loop's longest delay (and a millisecond), twice: the
      // poller's timer firing late, and the rate measured from answers read late by as much; a second,
      // as the Date header gives the server's time in whole seconds.
      const roundTrip = Math.max(...asked.map((a) => a.answered - a.sent));
      const slack = 2 * SPEED * (loop.max / 1e6 + 1) + 1000;
      // The first two requests learn the sandbox's rate (a second of wall time apart); from the third
      // on, each is sent when due: one interval after the previous answer, on the sandbox's clock.
      const gaps = asked.slice(2).map((a, k) => a.sent - asked[k + 1]!.answered);
      const scheduled = asked[2]?.sent ?? Infinity;
      const heardOnce = released.map((e) => ({
        e,
        seen: got.filter(
          (g) => g.e.releaseAt === e.timestamp * 1000 && g.e.currency === e.currency && g.e.title === e.title,
        ),
      }));
      const late = heardOnce.map(({ e, seen }) => (seen[0]?.sandboxAt ?? Infinity) - e.timestamp * 1000);
      console.log(
        `[labs at speed ${SPEED}] ${released.length} releases; heard by the strategy ${late.map((x) => `${x / 1000} s`).join(', ')} of sandbox time after their release; ` +
          `${asked.length} calendar requests, ${gaps.length} scheduled ones sent ${(Math.min(...gaps) / 1000).toFixed(1)}–${(Math.max(...gaps) / 1000).toFixed(1)} s after the previous answer; ` +
          `longest request ${(roundTrip / 1000).toFixed(2)} s, event-loop delay at most ${(loop.max / 1e6).toFixed(1)} ms (${((SPEED * loop.max) / 1e9).toFixed(2)} s of sandbox time)`,
      );
      expect(gaps.length).toBeGreaterThan(span / every / 2);
      for (const gap of gaps) expect(gap).toBeLessThanOrEqual(every + roundTrip + slack);
      for (const [i, { e, seen }] of heardOnce.entries()) {
        expect(seen, `${e.currency} ${e.title}`).toHaveLength(1);
        expect(late[i]).toBeGreaterThanOrEqual(0);
        // A release just after a poll's answer is asked for at the next poll, one interval (and the
        // slack) later, and heard a round trip (request, answer, the journal, the strategy) after that.
        if (e.timestamp * 1000 > scheduled) {
          const heard = seen[0]!.sandboxAt;
          const brought = asked.filter((a) => a.sent <= heard).at(-1)!;
          expect(late[i], `${e.currency} ${e.title}`).toBeLessThanOrEqual(
            every + (heard - brought.sent) + roundTrip + slack,
          );
        }
      }
    },
  );
});
