import type { CalendarEvent, SignalEvent } from '../domain/events.ts';
import type { UnixMs } from '../domain/time.ts';

/** OANDA labs data as engine events (calendar releases, chart-pattern and other signals). */
export interface Labs {
  calendar(req: {
    readonly instrument?: string;
    readonly from: UnixMs;
    readonly to: UnixMs;
  }): AsyncIterable<readonly CalendarEvent[]>;
  signals(req: {
    readonly instrument: string;
    readonly from: UnixMs;
    readonly to: UnixMs;
  }): AsyncIterable<readonly SignalEvent[]>;
}
