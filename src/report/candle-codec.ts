/**
 * The compact candle encoding a report embeds: mid prices as integers (twice the price in units of
 * the instrument's last displayed digit, so a mid of two prices at that precision stays exact), each
 * candle as five zigzag varints (seconds since the previous candle, open − previous close, high −
 * max(open, close), min(open, close) − low, close − open), the bytes in base64. About 5-7 bytes a
 * candle before base64; the page decodes it with `decodeCandles` in page/common.js.
 */

/** One series as the report holds it. */
export interface EncodedSeries {
  readonly instrument: string;
  readonly granularity: string;
  /** The instrument's displayPrecision: prices are integers / (2 × 10^precision). */
  readonly precision: number;
  readonly count: number;
  /** First and last candle open times, epoch seconds (0 when empty). */
  readonly from: number;
  readonly to: number;
  readonly data: string;
}

/** Growable byte buffer for the varints. */
class Bytes {
  buf = new Uint8Array(1 << 16);
  n = 0;
  varint(v: number): void {
    // Zigzag on plain numbers (values stay far below 2^52, so no 32-bit overflow).
    let z = v >= 0 ? v * 2 : -v * 2 - 1;
    if (this.n + 8 > this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    while (z >= 128) {
      this.buf[this.n++] = (z % 128) | 128;
      z = Math.floor(z / 128);
    }
    this.buf[this.n++] = z;
  }
}

/**
 * Encodes candles given as parallel arrays of open time (epoch ms) and mid OHLC. Times must be
 * increasing (a candle series is); prices are rounded to the half-digit grid.
 */
export function encodeCandles(
  meta: { instrument: string; granularity: string; precision: number },
  time: ArrayLike<number>,
  o: ArrayLike<number>,
  h: ArrayLike<number>,
  l: ArrayLike<number>,
  c: ArrayLike<number>,
  count: number,
): EncodedSeries {
  const scale = 2 * 10 ** meta.precision;
  const out = new Bytes();
  let prevT = 0;
  let prevC = 0;
  for (let i = 0; i < count; i++) {
    const t = Math.round(time[i]! / 1000);
    const oi = Math.round(o[i]! * scale),
      hi = Math.round(h[i]! * scale),
      li = Math.round(l[i]! * scale),
      ci = Math.round(c[i]! * scale);
    out.varint(t - prevT);
    out.varint(oi - prevC);
    out.varint(hi - Math.max(oi, ci));
    out.varint(Math.min(oi, ci) - li);
    out.varint(ci - oi);
    prevT = t;
    prevC = ci;
  }
  return {
    ...meta,
    count,
    from: count > 0 ? Math.round(time[0]! / 1000) : 0,
    to: count > 0 ? Math.round(time[count - 1]! / 1000) : 0,
    data: Buffer.from(out.buf.buffer, 0, out.n).toString('base64'),
  };
}
