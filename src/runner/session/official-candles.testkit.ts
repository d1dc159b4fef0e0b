import pino from 'pino';
import type { Candle } from '../../domain/candle.ts';
import { formatTime } from '../../domain/time.ts';
import type { Candlestick } from '../../domain/v20/index.ts';

/**
 * Shared by the LiveCandleFeed tests: a silent logger, the first minute, tick-built candles and
 * v20 candles as the endpoint answers them (their prices differ, so a test can tell which arrived).
 */
export const silent = pino({ level: 'silent' });
export const T0 = Date.UTC(2024, 0, 2, 10, 0);

/** The tick-built M1 candle `i` minutes after T0. */
export const built = (instrument: string, i: number): Candle => ({
  kind: 'candle',
  instrument,
  granularity: 'M1',
  time: T0 + i * 60_000,
  at: T0 + (i + 1) * 60_000,
  bo: 1.1,
  bh: 1.1,
  bl: 1.1,
  bc: 1.1,
  ao: 1.1001,
  ah: 1.1001,
  al: 1.1001,
  ac: 1.1001,
  volume: 3,
  complete: true,
});

/** The endpoint's candle opening at `time`. */
export const wire = (time: number, complete: boolean): Candlestick =>
  ({
    time: formatTime(time),
    complete,
    volume: 40,
    bid: { o: '1.2', h: '1.21', l: '1.19', c: '1.2' },
    ask: { o: '1.2001', h: '1.2101', l: '1.1901', c: '1.2001' },
  }) as Candlestick;
