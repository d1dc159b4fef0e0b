import { closeSync, existsSync, fdatasyncSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { OrderIntent } from '../domain/intents.ts';
import type { Transaction } from '../domain/v20/index.ts';

/** A journal that cannot be opened or written (a broken file, a full disk). */
export class JournalError extends Error {
  readonly code = 'JOURNAL' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'JournalError';
  }
}

/** An intent as journaled: written before it is submitted, confirmed once its outcome is known. */
export interface JournaledIntent {
  readonly intent: OrderIntent;
  /** Engine time when it was issued. */
  readonly at: number;
  /**
   * The last transaction journaled before the intent: whatever the intent caused comes after it.
   * Absent in journals written before it was recorded.
   */
  readonly afterTransactionID?: string;
  confirmed: boolean;
}

/** A snapshot of the strategy: its state, the client-ID sequence and the last transaction it handled. */
export interface StateSnapshot {
  readonly state: unknown;
  readonly sequence: number;
  /** The last transaction the strategy's onTransaction had seen when the snapshot was taken. */
  readonly handledTransactionID: string;
  /**
   * --broker sim: what the simulator's transactions do not record, its pending trailing stops'
   * current levels (order ID → price), so a restart restores them with the simulated account.
   */
  readonly trailing?: Readonly<Record<string, string>>;
  /**
   * The time (epoch ms) of the last price the runner had handled, per instrument, when the snapshot
   * was taken: the prices the snapshotted state has seen. A restart restores it, so a price not newer
   * (the pricing stream's first message repeats the latest price) is not delivered a second time.
   * Absent in snapshots written before it was recorded.
   */
  readonly prices?: Readonly<Record<string, number>>;
}

/** The trading day the daily-loss limit counts from: when it ends, and the NAV it opened with. */
export interface RiskDay {
  readonly dayEnd: number;
  readonly startNav: number;
}

/** What an opened journal holds. */
export interface JournalContents {
  /** Intents written but never confirmed (their outcome must be looked up before anything else). */
  readonly intents: readonly JournaledIntent[];
  /** Every transaction seen, in ID order. */
  readonly transactions: readonly Transaction[];
  /** The highest transaction ID seen ('' when none). */
  readonly lastTransactionID: string;
  /** The latest strategy snapshot, if any. */
  readonly state: StateSnapshot | undefined;
  /** The account as reconciled when the journal was started (opaque to the journal). */
  readonly baseline: unknown;
  /** The latest trading day of the daily-loss limit, so a restart within the day keeps counting from its opening NAV. */
  readonly riskDay: RiskDay | undefined;
  /** Records dropped from a torn tail on open (0 or 1 in practice). */
  readonly tornBytes: number;
}

/** One line of the log. `n` is a per-journal sequence that lets a snapshot say which lines it covers. */
export type JournalRecord =
  | { readonly k: 'intent'; readonly intent: OrderIntent; readonly at: number }
  | { readonly k: 'confirm'; readonly id: string }
  | { readonly k: 'tx'; readonly tx: Transaction }
  | { readonly k: 'state'; readonly snapshot: StateSnapshot }
  | { readonly k: 'baseline'; readonly baseline: unknown }
  | { readonly k: 'day'; readonly day: RiskDay };

type Numbered = JournalRecord & { readonly n: number };

interface SnapshotFile {
  readonly version: 1;
  /** The last record number folded into this snapshot. */
  readonly upTo: number;
  readonly intents: JournaledIntent[];
  readonly transactions: Transaction[];
  readonly lastTransactionID: string;
  readonly state: StateSnapshot | undefined;
  readonly baseline: unknown;
  /** Absent in snapshots written before the daily-loss day was journaled. */
  readonly riskDay?: RiskDay;
}

/** How a journal writes: compaction period, and (for speed measurements only) no fdatasync. */
export interface JournalOptions {
  /** Fold the log into the snapshot after this many records (default 10,000). */
  readonly compactEvery?: number;
  /** Skip fsync (tests of speed only; never for a real run). */
  readonly noSync?: boolean;
}

const LOG = 'journal.log';
const SNAPSHOT = 'snapshot.json';

/**
 * Frames one record: `<byte length> <crc32 hex> <json>\n`. The length and checksum let `open` tell a
 * complete record from a torn one (a crash in the middle of a write) without trusting the newline.
 */
export function frame(rec: Numbered): Buffer {
  const body = Buffer.from(JSON.stringify(rec), 'utf8');
  const head = Buffer.from(`${body.length} ${crc32(body).toString(16).padStart(8, '0')} `, 'latin1');
  return Buffer.concat([head, body, NL]);
}
const NL = Buffer.from('\n');

/**
 * Parses framed records from the start of `buf`. Stops at the first record that is incomplete or
 * fails its checksum and returns how many bytes were good: everything after that is a torn tail.
 */
export function parseFrames(buf: Buffer): { records: Numbered[]; goodBytes: number } {
  const records: Numbered[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const sp1 = buf.indexOf(0x20, pos);
    if (sp1 < 0 || sp1 - pos > 12) break;
    const len = Number(buf.toString('latin1', pos, sp1));
    if (!Number.isInteger(len) || len < 2) break;
    const sp2 = sp1 + 9;
    if (sp2 >= buf.length || buf[sp2] !== 0x20) break;
    const sum = buf.toString('latin1', sp1 + 1, sp2);
    const start = sp2 + 1;
    const end = start + len;
    if (end + 1 > buf.length || buf[end] !== 0x0a) break;
    const body = buf.subarray(start, end);
    if (crc32(body).toString(16).padStart(8, '0') !== sum) break;
    let rec: Numbered;
    try {
      rec = JSON.parse(body.toString('utf8')) as Numbered;
    } catch {
      break;
    }
    records.push(rec);
    pos = end + 1;
  }
  return { records, goodBytes: pos };
}

/**
 * The runner's crash-safe store: an append-only log of framed JSON records plus a snapshot.
 *
 * Use it to make a live run restartable: write an intent (and the strategy state that produced it)
 * *before* submitting it, every transaction as it arrives, and confirmations. `append` returns only
 * after `fsync`, so whatever a returned call wrote survives a `kill -9` or a power cut. On open, a torn
 * last record (a write cut short) is detected by its length/checksum and truncated away; nothing
 * before it is touched.
 *
 * Compaction folds the log into `snapshot.json` (temp file, fsync, rename, fsync of the directory),
 * then empties the log. Records carry a sequence number and the snapshot says which it covers, so a
 * crash between the rename and the truncation replays nothing twice.
 *
 * Not for several processes at once: one runner owns a journal directory.
 */
export class Journal {
  readonly dir: string;
  readonly #o: JournalOptions;
  #fd: number;
  #n: number;
  #sinceCompaction = 0;
  readonly #intents = new Map<string, JournaledIntent>();
  readonly #transactions: Transaction[] = [];
  #lastID = '';
  #state: StateSnapshot | undefined;
  #baseline: unknown;
  #riskDay: RiskDay | undefined;
  #tornBytes = 0;
  #dirty = false;

  private constructor(dir: string, o: JournalOptions) {
    this.dir = dir;
    this.#o = o;
    mkdirSync(dir, { recursive: true });
    let upTo = 0;
    const snapPath = join(dir, SNAPSHOT);
    if (existsSync(snapPath)) {
      let snap: SnapshotFile;
      try {
        snap = JSON.parse(readFileSync(snapPath, 'utf8')) as SnapshotFile;
      } catch (e) {
        throw new JournalError(`${snapPath}: not a valid journal snapshot (${(e as Error).message}); move it away to start a fresh journal, which loses the crash-recovery state`, { cause: e });
      }
      upTo = snap.upTo;
      for (const i of snap.intents) this.#intents.set(i.intent.id, i);
      this.#transactions.push(...snap.transactions);
      this.#lastID = snap.lastTransactionID;
      this.#state = snap.state;
      this.#baseline = snap.baseline;
      this.#riskDay = snap.riskDay;
    }
    const logPath = join(dir, LOG);
    this.#fd = openSync(logPath, 'a+');
    const buf = readFileSync(logPath);
    const { records, goodBytes } = parseFrames(buf);
    if (goodBytes < buf.length) {
      this.#tornBytes = buf.length - goodBytes;
      ftruncateSync(this.#fd, goodBytes);
      fsyncSync(this.#fd);
    }
    this.#n = upTo;
    for (const r of records) {
      if (r.n <= upTo) continue;
      this.#fold(r);
      this.#n = r.n;
      this.#sinceCompaction++;
    }
  }

  /** Opens (or creates) the journal in `dir`, truncating a torn tail. */
  static open(dir: string, o: JournalOptions = {}): Journal {
    try {
      return new Journal(dir, o);
    } catch (e) {
      if (e instanceof JournalError) throw e;
      throw new JournalError(`journal ${dir}: cannot open (${(e as Error).message}); check that the directory is writable`, { cause: e });
    }
  }

  /** What the journal holds now. */
  contents(): JournalContents {
    return {
      intents: [...this.#intents.values()].filter((i) => !i.confirmed),
      transactions: this.#transactions,
      lastTransactionID: this.#lastID,
      state: this.#state,
      baseline: this.#baseline,
      riskDay: this.#riskDay,
      tornBytes: this.#tornBytes,
    };
  }

  /** Whether an intent with this client ID was ever journaled. */
  has(id: string): boolean {
    return this.#intents.has(id);
  }

  get lastTransactionID(): string {
    return this.#lastID;
  }

  /**
   * Writes records in one write and one fdatasync; returns when they are durable. With `defer`,
   * the write is done (it survives a kill of the process: it is in the OS page cache) and the
   * fdatasync is left to `sync()` (power-loss durability a moment later).
   */
  append(recs: readonly JournalRecord[], defer = false): void {
    if (recs.length === 0) return;
    const bufs: Buffer[] = [];
    for (const r of recs) {
      const numbered = { n: ++this.#n, ...r } as Numbered;
      bufs.push(frame(numbered));
      this.#fold(numbered);
    }
    const all = bufs.length === 1 ? bufs[0]! : Buffer.concat(bufs);
    let off = 0;
    while (off < all.length) off += writeSync(this.#fd, all, off, all.length - off);
    if (defer) this.#dirty = true;
    else this.#sync();
    this.#sinceCompaction += recs.length;
    if (this.#sinceCompaction >= (this.#o.compactEvery ?? 10_000)) this.compact();
  }

  /** Makes deferred writes durable (fdatasync), if any. */
  sync(): void {
    if (this.#dirty) this.#sync();
  }

  #sync(): void {
    this.#dirty = false;
    if (!this.#o.noSync) fdatasyncSync(this.#fd);
  }

  /**
   * Records an intent (and optionally the state that produced it) before it is submitted. With
   * `defer`, see `append`: the caller submits, then calls `sync()`.
   */
  intent(intent: OrderIntent, at: number, snapshot?: StateSnapshot, defer = false): void {
    this.append(snapshot ? [{ k: 'intent', intent, at }, { k: 'state', snapshot }] : [{ k: 'intent', intent, at }], defer);
  }

  /** Marks an intent's outcome as known (it reached the broker, or was refused). */
  confirm(id: string): void {
    const i = this.#intents.get(id);
    if (i === undefined || i.confirmed) return;
    this.append([{ k: 'confirm', id }]);
  }

  /** Records a transaction (ignored when its ID is not above the last one). */
  transaction(tx: Transaction): void {
    if (this.#lastID !== '' && !(Number(tx.id) > Number(this.#lastID))) return;
    this.append([{ k: 'tx', tx }]);
  }

  /** Records a strategy snapshot. */
  snapshot(snapshot: StateSnapshot): void {
    this.append([{ k: 'state', snapshot }]);
  }

  /** Records the start of a trading day for the daily-loss limit (once a day). */
  day(day: RiskDay): void {
    this.append([{ k: 'day', day }]);
  }

  /** Records the reconciled account a fresh journal starts from. */
  baseline(baseline: unknown): void {
    this.append([{ k: 'baseline', baseline }]);
  }

  /** How many transactions the journal keeps (those after its baseline). */
  get transactionCount(): number {
    return this.#transactions.length;
  }

  /**
   * Starts the journal over from a newer reconciled account: the strategy snapshot, then the new
   * baseline; the transactions the baseline already contains (IDs up to its `lastTransactionID`) are
   * dropped, from memory now and from disk at the next compaction (which this triggers). Keeps a run
   * of months from growing its journal and its restart time without bound.
   *
   * The caller must make sure the strategy has handled every transaction up to the baseline (the
   * snapshot says so) and that no intent is waiting for its outcome: what is dropped cannot be
   * replayed or looked up after a restart.
   */
  rebase(baseline: { readonly lastTransactionID: string }, snapshot: StateSnapshot): void {
    if (!(Number(baseline.lastTransactionID) <= Number(snapshot.handledTransactionID))) {
      throw new JournalError(`rebase to transaction ${baseline.lastTransactionID} while the strategy has handled only up to ${snapshot.handledTransactionID}: its snapshot would miss transactions`);
    }
    this.append([{ k: 'state', snapshot }, { k: 'baseline', baseline }]);
    for (const [id, i] of this.#intents) if (i.confirmed) this.#intents.delete(id);
    this.compact();
  }

  /** Intents whose outcome is not known yet. */
  get unconfirmedCount(): number {
    let n = 0;
    for (const i of this.#intents.values()) if (!i.confirmed) n++;
    return n;
  }

  #fold(r: Numbered): void {
    switch (r.k) {
      case 'intent':
        this.#intents.set(r.intent.id, { intent: r.intent, at: r.at, afterTransactionID: this.#lastID, confirmed: false });
        return;
      case 'confirm': {
        const i = this.#intents.get(r.id);
        if (i) i.confirmed = true;
        return;
      }
      case 'tx':
        if (this.#lastID === '' || Number(r.tx.id) > Number(this.#lastID)) {
          this.#transactions.push(r.tx);
          this.#lastID = r.tx.id;
        }
        return;
      case 'state':
        this.#state = r.snapshot;
        return;
      case 'baseline': {
        this.#baseline = r.baseline;
        const upTo = (r.baseline as { lastTransactionID?: string } | undefined)?.lastTransactionID ?? '';
        if (this.#lastID === '' || Number(upTo) > Number(this.#lastID)) this.#lastID = upTo;
        // A newer baseline contains what came before it: keep only the transactions after it.
        const txs = this.#transactions;
        let kept = 0;
        for (let i = 0; i < txs.length; i++) if (Number(txs[i]!.id) > Number(upTo)) txs[kept++] = txs[i]!;
        txs.length = kept;
        return;
      }
      case 'day':
        this.#riskDay = r.day;
        return;
    }
  }

  /**
   * Folds the log into the snapshot file and empties the log. Durable order: temp file written and
   * fsynced, renamed over the snapshot, directory fsynced, then the log truncated.
   */
  compact(): void {
    const snap: SnapshotFile = {
      version: 1,
      upTo: this.#n,
      intents: [...this.#intents.values()],
      transactions: this.#transactions,
      lastTransactionID: this.#lastID,
      state: this.#state,
      baseline: this.#baseline,
      ...(this.#riskDay ? { riskDay: this.#riskDay } : {}),
    };
    const tmp = join(this.dir, `${SNAPSHOT}.tmp`);
    const fd = openSync(tmp, 'w');
    try {
      const b = Buffer.from(JSON.stringify(snap), 'utf8');
      let off = 0;
      while (off < b.length) off += writeSync(fd, b, off, b.length - off);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, join(this.dir, SNAPSHOT));
    const dfd = openSync(this.dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
    ftruncateSync(this.#fd, 0);
    fsyncSync(this.#fd);
    this.#sinceCompaction = 0;
  }

  close(): void {
    this.sync();
    closeSync(this.#fd);
  }
}
