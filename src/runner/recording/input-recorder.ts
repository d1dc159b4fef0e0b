import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { constants as zlib, crc32, gunzipSync, gzipSync } from 'node:zlib';
import type { Candle } from '../../domain/candle.ts';
import type { MarketEvent } from '../../domain/events.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import {
  INPUT_FILE,
  RecordingError,
  RUN_JSON,
  type RunMeta,
  type SessionAccount,
  type SessionInfo,
} from './recording.ts';

/** Options of the input recorder (the CLI gives the folder; tests give small sizes). */
export interface InputRecorderOptions {
  /** The run folder (created by the caller). */
  readonly dir: string;
  /** What run.json says about the run apart from its sessions (strategy, params, config, account…). */
  readonly meta: Omit<RunMeta, 'format' | 'sessions'>;
  /** A file is closed and the next one started once it holds this many bytes of JSON lines (default 64 MiB). */
  readonly rotateBytes?: number;
  /** The recording stops once it holds this many bytes of JSON lines in all sessions (default 2 GiB); `onWarn` says so. */
  readonly maxBytes?: number;
  /** The buffered lines are written (one gzip member) once they reach this many characters (default 64 Ki). */
  readonly bufferChars?: number;
  /**
   * What is buffered is written at least this often (default 1000 ms), as complete gzip members and
   * complete transactions.jsonl lines, so a killed process loses at most this much. An intent is
   * written at once (on the next turn of the event loop, before its order can be answered).
   */
  readonly flushMs?: number;
  /** A warning for the operator (the size cap was reached, a file could not be written). */
  readonly onWarn?: (message: string) => void;
  /**
   * Called by `start` before anything is written (the CLI creates the folder and points the journal
   * at it here): a run refused before its session starts leaves no trace. Without it, `dir` must exist.
   */
  readonly prepare?: () => void;
}

/** What a session start records (the runner knows it once it has reconciled the account). */
export interface SessionStart {
  readonly runId: string;
  readonly clientIdPrefix: string;
  /** The engine's client-ID sequence at the start (restored from the journal after a restart). */
  readonly sequence: number;
  readonly account: SessionAccount;
  /** The journal held a strategy snapshot: the strategy state was restored, not initialised. */
  readonly restoredState: boolean;
}

const num = (x: number): string => (Number.isFinite(x) ? String(x) : 'null');

/** The `seq` of the last whole record of an input file (a killed run's: its last member may be torn), if any. */
function lastSeqIn(path: string): number | undefined {
  if (!existsSync(path)) return undefined;
  let text: string;
  try {
    text = gunzipSync(readFileSync(path), { finishFlush: zlib.Z_SYNC_FLUSH }).toString('utf8');
  } catch {
    return undefined;
  }
  const end = text.lastIndexOf('\n');
  const m = /"seq":(\d+)/.exec(text.slice(text.lastIndexOf('\n', end - 1) + 1, end));
  return m ? Number(m[1]) : undefined;
}

/** The run folder's transactions.jsonl: the account's transactions, each once, in ID order. */
export const TRANSACTIONS_FILE = 'transactions.jsonl';

/** The ID of the last whole transaction line of a transactions.jsonl (0 when none): a restart appends after it. */
function lastTransactionIn(path: string): number {
  if (!existsSync(path)) return 0;
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const n = Math.min(size, 64 * 1024);
    const buf = Buffer.alloc(n);
    readSync(fd, buf, 0, n, size - n);
    const lines = buf.toString('utf8').split('\n');
    for (let i = lines.length - 1; i >= 0; i--) {
      try {
        const id = Number((JSON.parse(lines[i]!) as { id?: unknown }).id);
        if (Number.isInteger(id)) return id;
      } catch {
        // a torn last line, or the cut first one: the one before
      }
    }
    return 0;
  } finally {
    closeSync(fd);
  }
}

/**
 * `data` as one gzip member of stored (uncompressed) deflate blocks (RFC 1951 §3.2.4, RFC 1952): no
 * compressor to set up, so an intent's flush costs a CRC and a write. Readers take it as any member.
 */
export function storedGzip(data: Buffer): Buffer {
  const blocks = Math.max(1, Math.ceil(data.length / 65_535));
  const out = Buffer.alloc(10 + blocks * 5 + data.length + 8);
  out.set([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
  let at = 10;
  for (let b = 0; b < blocks; b++) {
    const part = data.subarray(b * 65_535, (b + 1) * 65_535);
    out[at] = b === blocks - 1 ? 1 : 0; // BFINAL on the last; BTYPE 00 (stored)
    out.writeUInt16LE(part.length, at + 1);
    out.writeUInt16LE(~part.length & 0xffff, at + 3);
    out.set(part, at + 5);
    at += 5 + part.length;
  }
  out.writeUInt32LE(crc32(data) >>> 0, at);
  out.writeUInt32LE(data.length >>> 0, at + 4);
  return out;
}

/**
 * A transactions.jsonl whose last line was torn by a kill inside its write is cut back to its last
 * whole line, so the next line is not glued to the fragment (the restart's backfill writes the lost
 * transaction again).
 */
function dropTornLine(fd: number): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const n = Math.min(size, 64 * 1024);
  const buf = Buffer.alloc(n);
  readSync(fd, buf, 0, n, size - n);
  if (buf[n - 1] === 10) return;
  const nl = buf.lastIndexOf(10);
  if (nl < 0 && n < size) return; // a line longer than 64 KiB: left as it is
  ftruncateSync(fd, size - n + nl + 1);
}

/**
 * Keeps what a live run receives, in arrival order, as gzip JSON lines in its run folder (the
 * format: docs/replay.md, `recording.ts`): ticks with their receive time, candles as delivered to the
 * strategy, labs events, the account's transactions, the strategy's intents with the event they
 * followed, session start and stop markers; and run.json, one entry per session.
 *
 * Cost on the hot path (a tick): one string built by concatenation and appended to a buffer; no
 * await, no object. The buffer is written once it holds `bufferChars`, and at least every
 * `flushMs` (a timer), each time as one complete gzip member (`gzipSync`, level 1, then one
 * `writeSync`): a file is a series of whole members, so a `kill -9` loses at most the last
 * `flushMs` of inputs and leaves nothing half-compressed (at worst a member torn by the kill inside
 * its write, which a reader drops). transactions.jsonl gets its complete lines in the same flush.
 * An intent is written in a microtask after it is recorded, before its order's request goes out: a
 * run killed while its order is in flight has the intent on disk. That member is stored, not
 * compressed (`storedGzip`: a CRC and a write on the order's path instead of a compressor's setup,
 * tens of µs); the timer's members are compressed. Files rotate at `rotateBytes`; at `maxBytes` the recording stops with a
 * warning and a `capped` record, and the session's stop marker is still written.
 */
export class InputRecorder {
  readonly dir: string;
  readonly #o: InputRecorderOptions;
  readonly #rotate: number;
  readonly #max: number;
  readonly #bufferChars: number;
  #meta: RunMeta;
  #session: SessionInfo | undefined;
  #buf = '';
  #seq = 0;
  /** The sequence number of the last market or transaction record: what an intent followed. */
  #lastEvent = 0;
  #fileBytes = 0;
  #totalBytes = 0;
  #fileNo = 0;
  /** The open input file (-1: none). */
  #fd = -1;
  #fileName = '';
  #timer: ReturnType<typeof setInterval> | undefined;
  /** An immediate flush is scheduled (after an intent). */
  #soon = false;
  #capped = false;
  #error: Error | undefined;
  /** transactions.jsonl, opened for appending (-1: none). */
  #txFd = -1;
  /** transactions.jsonl lines not written yet: they go with the inputs' buffer (one write, not one per transaction). */
  #txBuf = '';
  #lastTx: number;
  /** Records written in this session, by kind. */
  readonly counts = { tick: 0, candle: 0, labs: 0, tx: 0, intent: 0 };

  constructor(o: InputRecorderOptions) {
    this.#o = o;
    this.dir = o.dir;
    this.#rotate = o.rotateBytes ?? 64 * 1024 * 1024;
    this.#max = o.maxBytes ?? 2 * 1024 * 1024 * 1024;
    this.#bufferChars = o.bufferChars ?? 64 * 1024;
    this.#lastTx = lastTransactionIn(join(o.dir, TRANSACTIONS_FILE));
    const path = join(o.dir, RUN_JSON);
    // A restart in the same run folder continues it: a new session, new files, the sequence going on.
    const prior = existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as RunMeta) : undefined;
    // A folder of another run is never continued: its sessions would mix two accounts or strategies in one replay.
    if (
      prior !== undefined &&
      (prior.accountID !== o.meta.accountID ||
        prior.strategy?.name !== o.meta.strategy.name ||
        prior.env !== o.meta.env)
    ) {
      throw new RecordingError(
        `run folder ${o.dir} holds a run of ${prior.strategy?.name ?? '?'} on ${prior.env ?? '?'} account ${prior.accountID ?? '?'} (${RUN_JSON}); this run is ${o.meta.strategy.name} on ${o.meta.env} account ${o.meta.accountID}: give --out another folder (or none, for a new one)`,
      );
    }
    this.#meta = { format: 1, ...o.meta, sessions: prior?.sessions ?? [] };
    for (const s of this.#meta.sessions) {
      // A session with no stop (the process was killed): its last record, from its last file.
      if (s.lastSeq === undefined) {
        s.lastSeq = lastSeqIn(join(o.dir, s.files[s.files.length - 1] ?? '')) ?? s.firstSeq;
        s.reason ??= 'cut off: no stop marker (the process was killed or crashed)';
      }
      this.#seq = Math.max(this.#seq, s.lastSeq);
      this.#totalBytes += s.bytes ?? 0;
      for (const f of s.files) this.#fileNo = Math.max(this.#fileNo, Number(/(\d+)/.exec(f)?.[1] ?? 0));
    }
  }

  /** Whether the size cap stopped the recording. */
  get capped(): boolean {
    return this.#capped;
  }

  /** The run folder's metadata as written so far. */
  get meta(): RunMeta {
    return this.#meta;
  }

  /** Opens a session: its entry in run.json, a new file and the start marker. */
  start(s: SessionStart, wall = Date.now()): void {
    if (this.#session !== undefined) throw new Error('InputRecorder.start: a session is already open');
    this.#o.prepare?.();
    const n = this.#meta.sessions.length + 1;
    this.#session = {
      n,
      runId: s.runId,
      strategySha256: this.#meta.strategy.sha256,
      clientIdPrefix: s.clientIdPrefix,
      sequence: s.sequence,
      restoredState: s.restoredState,
      start: new Date(wall).toISOString(),
      firstSeq: this.#seq + 1,
      files: [],
      bytes: 0,
      account: s.account,
    };
    this.#meta.sessions.push(this.#session);
    this.#openFile();
    try {
      const path = join(this.dir, TRANSACTIONS_FILE);
      this.#txFd = openSync(path, 'a+');
      dropTornLine(this.#txFd);
    } catch (e) {
      this.#o.onWarn?.(
        `run folder ${this.dir}: ${TRANSACTIONS_FILE} cannot be written (${(e as Error).message})`,
      );
    }
    this.#line(
      `{"k":"session","seq":${++this.#seq},"rt":${wall},"event":"start","session":${n},"runId":${JSON.stringify(s.runId)}}\n`,
    );
    this.#writeMeta();
    this.#timer = setInterval(() => this.flush(), this.#o.flushMs ?? 1000);
    this.#timer.unref();
  }

  /** A price as it arrived (`rt`: wall-clock receive time, ms). */
  tick(instrument: string, at: number, bid: number, ask: number, rt: number): void {
    if (this.#capped) return;
    this.counts.tick++;
    this.#lastEvent = ++this.#seq;
    this.#line(
      '{"k":"tick","seq":' +
        this.#seq +
        ',"rt":' +
        num(rt) +
        ',"i":"' +
        instrument +
        '","t":' +
        at +
        ',"b":' +
        bid +
        ',"a":' +
        ask +
        '}\n',
    );
  }

  /**
   * A candle as delivered to the strategy: `official` (the candles endpoint), `ticks` (built from
   * ticks) or `warmup` (handlers not called). `px`: the price that completed it, when the candle is
   * delivered while that price is handled (before the price's own record).
   */
  candle(
    c: Candle,
    src: 'official' | 'ticks' | 'warmup',
    rt: number,
    px?: { readonly instrument: string; readonly at: number; readonly bid: number; readonly ask: number },
  ): void {
    if (this.#capped) return;
    this.counts.candle++;
    this.#lastEvent = ++this.#seq;
    const p =
      px === undefined
        ? ''
        : ',"px":{"i":"' + px.instrument + '","t":' + px.at + ',"b":' + px.bid + ',"a":' + px.ask + '}';
    this.#line(
      `{"k":"candle","seq":${this.#seq},"rt":${num(rt)},"src":"${src}"${p},"c":${JSON.stringify(c)}}\n`,
    );
  }

  /** A labs event (signal, calendar) as delivered to the strategy. */
  labs(e: MarketEvent, rt: number): void {
    if (this.#capped) return;
    this.counts.labs++;
    this.#lastEvent = ++this.#seq;
    this.#line(`{"k":"labs","seq":${this.#seq},"rt":${num(rt)},"e":${JSON.stringify(e)}}\n`);
  }

  /**
   * A transaction of the account as received (before the strategy's engine), or one the risk layer
   * made (a refusal, ID `<last>.<n>`). The account's own also go to transactions.jsonl, each once
   * (one a restart replays again is not written twice), past the size cap too.
   */
  transaction(t: Transaction, rt: number): void {
    const json = JSON.stringify(t);
    const id = Number(t.id);
    if (Number.isInteger(id) && id > this.#lastTx) {
      this.#lastTx = id;
      this.#txBuf += `${json}\n`;
    }
    if (this.#capped) return;
    this.counts.tx++;
    this.#lastEvent = ++this.#seq;
    this.#line(`{"k":"tx","seq":${this.#seq},"rt":${num(rt)},"tx":${json}}\n`);
  }

  /** An intent the strategy returned, at engine time `at`, after the last event recorded. */
  intent(intent: OrderIntent, at: number, rt: number): void {
    if (this.#capped) return;
    this.counts.intent++;
    this.#line(
      `{"k":"intent","seq":${++this.#seq},"rt":${num(rt)},"after":${this.#lastEvent},"t":${num(at)},"intent":${JSON.stringify(intent)}}\n`,
    );
    if (!this.#soon) {
      // In a microtask: after the engine's synchronous step (its other intents join this member),
      // before the order's request can be on the wire (the HTTP client writes it in a later task).
      this.#soon = true;
      queueMicrotask(() => {
        this.#soon = false;
        if (this.#session !== undefined) this.#flush(false);
      });
    }
  }

  /**
   * What became of one attempt to send an intent (the send point's `onSend`/`onAttempt`): `sent`,
   * then `answered`, an HTTP status, `timeout` or `network error`, then `found` or `not found` when
   * it was looked up. Replay names them for a fill that was late or sent more than once.
   */
  attempt(id: string, n: number, what: string, rt: number): void {
    if (this.#capped) return;
    this.#line(
      `{"k":"attempt","seq":${++this.#seq},"rt":${num(rt)},"id":${JSON.stringify(id)},"n":${n},"what":${JSON.stringify(what)}}\n`,
    );
  }

  /** The ID of the last transaction in transactions.jsonl (0: none); a start after a kill backfills from it (`backfill`). */
  get lastTransactionID(): number {
    return this.#lastTx;
  }

  /**
   * Where transactions.jsonl has a hole before `upTo` (the ID the transaction stream will start
   * after): the ID to fetch `sinceid` from, or undefined when it is complete. Only a folder that
   * continues (a previous session, with an account) can lack transactions: those a killed process
   * had received but not written (at most `flushMs` of them). Call after `start`.
   */
  missingBefore(upTo: number): number | undefined {
    const first = this.#meta.sessions[0]?.account;
    if (this.#meta.sessions.length < 2 || first?.broker !== 'v20') return undefined;
    const from = Math.max(this.#lastTx, Number(first.lastTransactionID));
    return from < upTo ? from : undefined;
  }

  /**
   * Appends to transactions.jsonl the account's transactions it lacks (fetched by the runner from
   * `lastTransactionID` on), e.g. those a killed run had received but not yet written. Only IDs
   * after the file's last, in order; the inputs are not touched (they record what was received, when).
   */
  backfill(txs: readonly Transaction[]): number {
    let n = 0;
    for (const t of txs) {
      const id = Number(t.id);
      if (!Number.isInteger(id) || id <= this.#lastTx) continue;
      this.#lastTx = id;
      this.#txBuf += `${JSON.stringify(t)}\n`;
      n++;
    }
    if (this.#txBuf !== '') this.#pushTx();
    return n;
  }

  /** Writes what is buffered: a gzip member, transactions.jsonl lines (the timer calls this; nothing when nothing is new). */
  flush(): void {
    this.#flush(true);
  }

  /** `compress` false: the member is stored (no deflate), a few µs instead of tens: an intent's flush, on the order's path. */
  #flush(compress: boolean): void {
    if (this.#buf !== '') this.#push(compress);
    if (this.#txBuf !== '') this.#pushTx();
  }

  /** Ends the session: the stop marker, run.json, the files closed. Resolves once they are on disk. */
  async stop(reason: string, wall = Date.now()): Promise<void> {
    const s = this.#session;
    if (s === undefined) return;
    if (this.#timer) clearInterval(this.#timer);
    // The stop marker is written even past the cap: a replay must see where the session ended.
    this.#buf += `{"k":"session","seq":${++this.#seq},"rt":${wall},"event":"stop","session":${s.n},"reason":${JSON.stringify(reason)}}\n`;
    this.#push();
    this.#closeFile();
    if (this.#txBuf !== '') this.#pushTx();
    if (this.#txFd >= 0) {
      closeSync(this.#txFd);
      this.#txFd = -1;
    }
    s.stop = new Date(wall).toISOString();
    s.reason = reason;
    s.lastSeq = this.#seq;
    s.bytes = this.#sessionBytes;
    s.records = { ...this.counts };
    if (this.#capped) s.capped = true;
    this.#writeMeta();
    this.#session = undefined;
    if (this.#error !== undefined) throw this.#error;
  }

  #sessionBytes = 0;

  #line(l: string): void {
    this.#buf += l;
    if (this.#buf.length >= this.#bufferChars) this.#push();
  }

  #pushTx(): void {
    const t = this.#txBuf;
    this.#txBuf = '';
    if (this.#txFd < 0) return;
    try {
      // One write of whole lines: a kill leaves transactions.jsonl ending at a line's end (or, killed
      // inside this write, a torn last line that the next start's reader skips and the backfill replaces).
      writeSync(this.#txFd, t);
    } catch (e) {
      this.#o.onWarn?.(
        `run folder ${this.dir}: ${TRANSACTIONS_FILE} cannot be written (${(e as Error).message})`,
      );
    }
  }

  /** Writes `text` to the input file as one complete gzip member. */
  #member(text: string, compress = true): void {
    if (this.#fd < 0) return;
    try {
      writeSync(this.#fd, compress ? gzipSync(text, { level: 1 }) : storedGzip(Buffer.from(text)));
    } catch (e) {
      this.#fail(e as Error);
    }
  }

  #fail(e: Error): void {
    if (this.#error !== undefined) return;
    this.#error = e;
    this.#capped = true; // nothing more is recorded; the run goes on
    this.#o.onWarn?.(
      `run folder ${this.dir}: ${this.#fileName} cannot be written (${e.message}); the recording of inputs stops, the run goes on`,
    );
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
  }

  #push(compress = true): void {
    if (this.#txBuf !== '') this.#pushTx();
    let buf = this.#buf;
    this.#buf = '';
    if (buf === '' || this.#fd < 0) return;
    const bytes = Buffer.byteLength(buf);
    this.#fileBytes += bytes;
    this.#totalBytes += bytes;
    this.#sessionBytes += bytes;
    if (!this.#capped && this.#totalBytes >= this.#max) {
      this.#capped = true;
      buf += `{"k":"capped","seq":${++this.#seq},"rt":${Date.now()},"bytes":${this.#totalBytes}}\n`;
      this.#member(buf, compress);
      this.#o.onWarn?.(
        `run folder ${this.dir}: the recording of inputs reached its cap of ${this.#max} bytes (--record-max-mb) and stops here; the run goes on, and a replay covers the run up to this point`,
      );
      return;
    }
    this.#member(buf, compress);
    if (this.#fileBytes >= this.#rotate) {
      this.#closeFile();
      this.#openFile();
      this.#writeMeta();
    }
  }

  #openFile(): void {
    const name = INPUT_FILE(++this.#fileNo);
    this.#session!.files.push(name);
    this.#fileBytes = 0;
    this.#fileName = name;
    // Level 1 (in #member): the fastest; JSON lines of prices still shrink about 6 to 8 times.
    try {
      this.#fd = openSync(join(this.dir, name), 'wx');
    } catch (e) {
      this.#fail(e as Error);
    }
  }

  #closeFile(): void {
    if (this.#fd < 0) return;
    try {
      closeSync(this.#fd);
    } catch (e) {
      this.#fail(e as Error);
    }
    this.#fd = -1;
  }

  /** run.json through a temporary file and a rename: never half-written. */
  #writeMeta(): void {
    const path = join(this.dir, RUN_JSON);
    try {
      writeFileSync(`${path}.tmp`, `${JSON.stringify(this.#meta, null, 2)}\n`);
      renameSync(`${path}.tmp`, path);
    } catch (e) {
      this.#o.onWarn?.(`run folder ${this.dir}: ${RUN_JSON} cannot be written (${(e as Error).message})`);
    }
  }
}
