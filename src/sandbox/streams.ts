/** The sandbox's open price and transaction streams: opening one, each line through the faults, a price to every stream that wants it, heartbeats, and closing them all. */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { formatTime, type UnixMs } from '../domain/time.ts';
import type { SandboxAccount } from './account.ts';
import type { FaultCounters, Faults, StreamConn, StreamLimits } from './faults.ts';
import { toJSON } from './route.ts';
import type { PriceStream, TxStream } from './v3/context.ts';

/** What `Sandbox.stats()` counts of requests and stream lines. */
export type SandboxCounters = FaultCounters & { requests: number; streamConnections: number };

/** The streams the routes open (`priceStreams`, `txStreams`) and what is written to them. */
export class SandboxStreams {
  readonly priceStreams = new Set<PriceStream>();
  readonly txStreams = new Set<TxStream>();
  /** One line per account and time format for all the price streams that want it (300 streams of one account cost one JSON text, not 300). */
  readonly #lineCache = new Map<string, string>();
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(
    private readonly o: {
      faults: Faults;
      counters: SandboxCounters;
      limits: StreamLimits;
      /** The RequestID header of a new stream. */
      requestID: () => string;
      log?: Logger | undefined;
    },
  ) {}

  /** Starts a stream on a response (headers sent). */
  open(res: ServerResponse): StreamConn {
    this.o.counters.streamConnections++;
    // A client that goes away mid-write must not take the server down.
    res.on('error', (e) => this.o.log?.debug({ err: e.message }, 'stream connection error'));
    res.writeHead(200, {
      'Content-Type': 'application/octet-stream',
      RequestID: this.o.requestID(),
      'Cache-Control': 'no-cache',
    });
    res.flushHeaders();
    return {
      res,
      lines: 0,
      chain: Promise.resolve(),
      busy: 0,
      held: '',
      drainHooked: false,
      blockedSince: undefined,
      limits: this.o.limits,
    };
  }

  /** Writes one line; false when the stream is gone (or was cut by a fault). */
  write(conn: StreamConn, body: unknown, unix: boolean): boolean {
    return this.o.faults.writeLine(conn, `${toJSON(body, unix)}\n`, this.o.counters);
  }

  /** An instrument's new price to every price stream that asked for it; `priceJSON` builds its line per account. Streams that are gone are dropped. */
  price(
    instrument: string,
    priceJSON: (account: SandboxAccount, instrument: string) => Record<string, unknown> | undefined,
  ): void {
    if (this.o.faults.stalled || this.priceStreams.size === 0) return;
    const lineCache = this.#lineCache;
    lineCache.clear();
    for (const s of this.priceStreams) {
      if (!s.instruments.has(instrument)) continue;
      const key = s.unix ? `u${s.account.id}` : s.account.id;
      let line = lineCache.get(key);
      if (line === undefined) {
        const body = priceJSON(s.account, instrument);
        if (body === undefined) continue;
        line = `${toJSON(body, s.unix)}\n`;
        lineCache.set(key, line);
      }
      if (!this.o.faults.writeLine(s.conn, line, this.o.counters)) this.priceStreams.delete(s);
    }
  }

  /** A HEARTBEAT on every stream each `everyMs` real ms, stamped with the sandbox clock (none while the faults stall the streams). */
  startHeartbeats(everyMs: number, now: () => UnixMs): void {
    this.#heartbeat = setInterval(() => {
      if (this.o.faults.stalled) return;
      const time = formatTime(now());
      for (const s of this.priceStreams)
        if (!this.write(s.conn, { type: 'HEARTBEAT', time }, s.unix)) this.priceStreams.delete(s);
      for (const s of this.txStreams) {
        if (
          !this.write(
            s.conn,
            { type: 'HEARTBEAT', lastTransactionID: s.account.broker.ledger.lastTransactionID, time },
            s.unix,
          )
        ) {
          s.off();
          this.txStreams.delete(s);
        }
      }
    }, everyMs);
    this.#heartbeat.unref();
  }

  /** Streams open now. */
  get count(): number {
    return this.priceStreams.size + this.txStreams.size;
  }

  /** Bytes waiting in the process for the streams' sockets. */
  queuedBytes(): number {
    let n = 0;
    for (const x of this.priceStreams) n += x.conn.res.writableLength + x.conn.held.length;
    for (const x of this.txStreams) n += x.conn.res.writableLength + x.conn.held.length;
    return n;
  }

  /** Stops the heartbeats and ends every stream. */
  close(): void {
    clearInterval(this.#heartbeat);
    for (const s of this.priceStreams) s.conn.res.end();
    for (const s of this.txStreams) {
      s.off();
      s.conn.res.end();
    }
    this.priceStreams.clear();
    this.txStreams.clear();
  }
}
