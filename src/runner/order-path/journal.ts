import {
  closeSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';
import type { RiskDay } from '../../engine/risk.ts';
import { acquireLock, JournalError, releaseLock } from './journal-lock.ts';

export { JournalError, JournalLockedError, type LockHolder } from './journal-lock.ts';

/** An intent as journaled: written before it is submitted, confirmed once its outcome is known. */
export interface JournaledIntent {
  readonly intent: OrderIntent;
  /** Engine time when it was issued. */
  readonly at: number;
  /**
   * Wall-clock time (epoch ms) when it was journaled: its age at a restart (`--max-intent-age`).
   * Absent in journals written before it was recorded.
   */
  readonly wall?: number;
  /**
   * The last transaction journaled before the intent: whatever the intent caused comes after it.
   * Absent in journals written before it was recorded.
   */
  readonly afterTransactionID?: string;
  /**
   * The journal writes a "sent" mark for this intent when its request leaves (`Journal.sent`): true
   * for intents journaled since the mark exists. Without it (an older journal) an unanswered intent
   * may have been sent and counts as such.
   */
  readonly marksSent?: boolean;
  /** Wall-clock time (epoch ms) its request last left the process (its "sent" mark); absent: never sent. */
  sentAt?: number;
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

export type { RiskDay };

/**
 * The kill switch's halt, journaled before it acts: when it engaged (epoch ms) and why. While the
 * journal holds one, a runner on it trades nothing (it finishes the flatten and exits) until an
 * operator clears it (`fxflow journal clear-halt <dir>`).
 */
export interface Halt {
  readonly at: number;
  readonly why: string;
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
  /** Bytes dropped from a torn tail on open (a write cut short by a crash: 0 or part of 1 record). */
  readonly tornBytes: number;
  /**
   * Damaged stretches of the log before its last intact record (a flipped byte, a bad sector): what
   * they held is unknown, so a runner must not trade on the journal. Records after each stretch are
   * recovered when their frames are intact. Empty for a sound journal.
   */
  readonly damaged: readonly JournalDamage[];
  /** The halt in force (the kill switch engaged and nobody cleared it since), if any. */
  readonly halt?: Halt;
}

/** A stretch of the log that fails its frame or checksum, followed by intact records. */
export interface JournalDamage {
  /** Byte offset in journal.log where the damaged stretch starts. */
  readonly offset: number;
  readonly bytes: number;
  /** Intact records recovered after it (up to the next damaged stretch or the end). */
  readonly recoveredAfter: number;
}

/** One line of the log. `n` is a per-journal sequence that lets a snapshot say which lines it covers. */
export type JournalRecord =
  | {
      readonly k: 'intent';
      readonly intent: OrderIntent;
      readonly at: number;
      readonly wall?: number;
      readonly marksSent?: boolean;
    }
  | { readonly k: 'sent'; readonly id: string; readonly wall: number }
  | { readonly k: 'confirm'; readonly id: string }
  | { readonly k: 'tx'; readonly tx: Transaction }
  | { readonly k: 'state'; readonly snapshot: StateSnapshot }
  | { readonly k: 'baseline'; readonly baseline: unknown }
  | { readonly k: 'day'; readonly day: RiskDay }
  | { readonly k: 'halt'; readonly halt: Halt | null };

type Numbered = JournalRecord & { readonly n: number };

interface SnapshotFile {
  readonly version: 1 | 2;
  /** The last record number folded into this snapshot. */
  readonly upTo: number;
  readonly intents: JournaledIntent[];
  readonly transactions: Transaction[];
  readonly lastTransactionID: string;
  readonly state: StateSnapshot | undefined;
  readonly baseline: unknown;
  /** Absent in snapshots written before the daily-loss day was journaled. */
  readonly riskDay?: RiskDay;
  /** The halt in force at the snapshot, if any. */
  readonly halt?: Halt;
}

/** How a journal writes: compaction period, and (for speed measurements only) no fdatasync. */
export interface JournalOptions {
  /** Fold the log into the snapshot after this many records (default 10,000). */
  readonly compactEvery?: number;
  /** Skip fsync (tests of speed only; never for a real run). */
  readonly noSync?: boolean;
  /**
   * Start afresh (`--new-journal`): with the lock held, the existing log and snapshot are moved
   * into `replaced-<time>/` inside the directory (kept for inspection, never read again).
   */
  readonly fresh?: boolean;
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

/** The end of the intact frame starting at `pos` (its newline + 1), and its record; or 'torn' / 'bad'. */
function frameAt(buf: Buffer, pos: number): { end: number; rec: Numbered } | 'torn' | 'bad' {
  const sp1 = buf.indexOf(0x20, pos);
  if (sp1 < 0) return 'torn';
  if (sp1 - pos > 12 || sp1 === pos) return 'bad';
  const len = Number(buf.toString('latin1', pos, sp1));
  if (!Number.isInteger(len) || len < 2) return 'bad';
  const sp2 = sp1 + 9;
  if (sp2 >= buf.length) return 'torn';
  if (buf[sp2] !== 0x20) return 'bad';
  const sum = buf.toString('latin1', sp1 + 1, sp2);
  const start = sp2 + 1;
  const end = start + len;
  if (end + 1 > buf.length) return 'torn';
  if (buf[end] !== 0x0a) return 'bad';
  const body = buf.subarray(start, end);
  if (crc32(body).toString(16).padStart(8, '0') !== sum) return 'bad';
  try {
    return { end: end + 1, rec: JSON.parse(body.toString('utf8')) as Numbered };
  } catch {
    return 'bad';
  }
}

/**
 * Parses framed records from `buf`. A frame that fails (length, newline, checksum, JSON) starts a
 * damaged stretch; the scan resumes at the next position where an intact frame begins (its CRC-32
 * makes a false match a 1 in 4 billion event), and the stretch is reported with its offset. A failure with
 * no intact frame after it is a torn tail: `goodBytes` ends before it. A crash cuts the last write
 * short (a torn tail); only a damaged stretch followed by intact records, or a complete last frame
 * with a wrong checksum, is damage.
 */
export function parseFrames(buf: Buffer): {
  records: Numbered[];
  goodBytes: number;
  damaged: JournalDamage[];
} {
  const records: Numbered[] = [];
  const damaged: { offset: number; bytes: number; recoveredAfter: number }[] = [];
  let pos = 0;
  let goodBytes = 0;
  while (pos < buf.length) {
    const f = frameAt(buf, pos);
    if (typeof f !== 'string') {
      records.push(f.rec);
      if (
        damaged.length > 0 &&
        damaged[damaged.length - 1]!.offset + damaged[damaged.length - 1]!.bytes <= pos
      )
        damaged[damaged.length - 1]!.recoveredAfter++;
      pos = f.end;
      goodBytes = pos;
      continue;
    }
    // The next intact frame: the first position after `pos` where one parses (a damaged newline
    // must not hide the record after it). Only a digit can start a frame; most fail at the header.
    let next = -1;
    for (let q = pos + 1; q < buf.length; q++) {
      const ch = buf[q]!;
      if (ch < 0x30 || ch > 0x39) continue;
      if (typeof frameAt(buf, q) !== 'string') {
        next = q;
        break;
      }
    }
    if (next < 0) {
      // A complete last frame whose checksum fails was written whole and changed since: damage, not a tear.
      if (f === 'bad' && completeFrame(buf, pos))
        damaged.push({ offset: pos, bytes: buf.length - pos, recoveredAfter: 0 });
      break;
    }
    damaged.push({ offset: pos, bytes: next - pos, recoveredAfter: 0 });
    pos = next;
  }
  return { records, goodBytes, damaged };
}

/** Whether the bytes at `pos` hold a whole frame (a well-formed header, its length of body, and the newline). */
function completeFrame(buf: Buffer, pos: number): boolean {
  const m = /^(\d{1,12}) [0-9a-f]{8} /.exec(buf.toString('latin1', pos, Math.min(buf.length, pos + 24)));
  if (m === null) return false;
  const end = pos + m[0].length + Number(m[1]);
  return end + 1 === buf.length && buf[end] === 0x0a;
}

/** Snapshot file: the snapshot's JSON as a string, with its length and CRC-32, so any change is detected. */
interface SnapshotEnvelope {
  readonly fxflowJournalSnapshot: 2;
  readonly bytes: number;
  readonly crc32: string;
  readonly body: string;
}

function readSnapshot(snapPath: string): SnapshotFile {
  const fix = 'start afresh from the account with --new-journal (the journal is moved aside, not deleted)';
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(snapPath, 'utf8'));
  } catch (e) {
    throw new JournalError(`${snapPath}: not a valid journal snapshot (${(e as Error).message}); ${fix}`, {
      cause: e,
    });
  }
  const env = doc as Partial<SnapshotEnvelope> & Partial<SnapshotFile>;
  if (env.fxflowJournalSnapshot === 2) {
    const body = Buffer.from(String(env.body), 'utf8');
    const sum = crc32(body).toString(16).padStart(8, '0');
    if (body.length !== env.bytes || sum !== env.crc32) {
      throw new JournalError(
        `${snapPath}: damaged, its checksum does not match (${body.length} bytes with CRC-32 ${sum}, written as ${env.bytes} bytes with ${env.crc32}); the runner will not trade on it: ${fix}`,
      );
    }
    return JSON.parse(body.toString('utf8')) as SnapshotFile;
  }
  // A snapshot from before checksums (version 1): read as it is; the next compaction adds one.
  if (env.version === 1) return env as SnapshotFile;
  throw new JournalError(`${snapPath}: not a journal snapshot fxflow wrote; ${fix}`);
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
 * One process at a time: `open` takes the directory's lock (`journal.lock`, see `acquireLock`) and
 * `close` releases it; a second `open` while the holder lives throws `JournalLockedError` naming its
 * pid. A damaged record in the middle of the log is reported (`contents().damaged`) with its offset,
 * and the intact records after it are recovered; the snapshot carries a CRC-32. `Journal.read`
 * looks at a journal without locking or changing it.
 */
export class Journal {
  readonly dir: string;
  readonly #o: JournalOptions;
  #fd: number;
  #n = 0;
  #sinceCompaction = 0;
  readonly #intents = new Map<string, JournaledIntent>();
  readonly #transactions: Transaction[] = [];
  #lastID = '';
  #state: StateSnapshot | undefined;
  #baseline: unknown;
  #riskDay: RiskDay | undefined;
  #halt: Halt | undefined;
  #tornBytes = 0;
  #dirty = false;

  #lock: { path: string; token: string } | undefined;
  #damaged: JournalDamage[] = [];
  /** Where `fresh` moved the previous journal ('' when nothing was moved). */
  replaced = '';

  private constructor(dir: string, o: JournalOptions, readOnly = false) {
    this.dir = dir;
    this.#o = o;
    if (!readOnly) {
      mkdirSync(dir, { recursive: true });
      this.#lock = acquireLock(dir);
    }
    try {
      if (o.fresh === true && !readOnly) this.#moveAside();
      this.#fd = this.#load(readOnly);
    } catch (e) {
      if (this.#lock !== undefined) releaseLock(this.#lock);
      throw e;
    }
  }

  /** `--new-journal`: the log and snapshot into `replaced-<time>/` (the lock stays held). */
  #moveAside(): void {
    const present = [LOG, SNAPSHOT].filter(
      (f) => existsSync(join(this.dir, f)) && statSync(join(this.dir, f)).size > 0,
    );
    if (present.length === 0) return;
    const to = join(this.dir, `replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`);
    mkdirSync(to, { recursive: true });
    for (const f of [LOG, SNAPSHOT])
      if (existsSync(join(this.dir, f))) renameSync(join(this.dir, f), join(to, f));
    const dfd = openSync(this.dir, 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
    this.replaced = to;
  }

  #load(readOnly: boolean): number {
    const dir = this.dir;
    let upTo = 0;
    const snapPath = join(dir, SNAPSHOT);
    if (existsSync(snapPath)) {
      const snap = readSnapshot(snapPath);
      upTo = snap.upTo;
      for (const i of snap.intents) this.#intents.set(i.intent.id, i);
      this.#transactions.push(...snap.transactions);
      this.#lastID = snap.lastTransactionID;
      this.#state = snap.state;
      this.#baseline = snap.baseline;
      this.#riskDay = snap.riskDay;
      this.#halt = snap.halt;
    }
    const logPath = join(dir, LOG);
    const fd = readOnly ? -1 : openSync(logPath, 'a+');
    const buf = existsSync(logPath) ? readFileSync(logPath) : Buffer.alloc(0);
    const { records, goodBytes, damaged } = parseFrames(buf);
    this.#damaged = damaged;
    const lastDamage = damaged[damaged.length - 1];
    const damagedTail = lastDamage !== undefined && lastDamage.offset + lastDamage.bytes === buf.length;
    if (goodBytes < buf.length && !damagedTail) {
      this.#tornBytes = buf.length - goodBytes;
      // A damaged journal is left as it is (evidence): only a sound one loses its torn tail.
      if (!readOnly && damaged.length === 0) {
        ftruncateSync(fd, goodBytes);
        fsyncSync(fd);
      }
    }
    this.#n = upTo;
    for (const r of records) {
      if (r.n <= upTo) continue;
      this.#fold(r);
      this.#n = r.n;
      this.#sinceCompaction++;
    }
    return fd;
  }

  /**
   * What the journal in `dir` holds, without taking its lock or changing anything (a torn tail is
   * reported, not cut): for inspection while a runner may own it, and for tests.
   */
  static read(dir: string): JournalContents {
    try {
      return new Journal(dir, {}, true).contents();
    } catch (e) {
      if (e instanceof JournalError) throw e;
      throw new JournalError(`journal ${dir}: cannot read (${(e as Error).message})`, { cause: e });
    }
  }

  /** Opens (or creates) the journal in `dir`, truncating a torn tail. */
  static open(dir: string, o: JournalOptions = {}): Journal {
    try {
      return new Journal(dir, o);
    } catch (e) {
      if (e instanceof JournalError) throw e;
      throw new JournalError(
        `journal ${dir}: cannot open (${(e as Error).message}); check that the directory is writable`,
        { cause: e },
      );
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
      damaged: this.#damaged,
      ...(this.#halt !== undefined ? { halt: this.#halt } : {}),
    };
  }

  /** A journaled intent by client ID (its engine time, wall time and the transaction before it). */
  pendingIntent(id: string): JournaledIntent | undefined {
    return this.#intents.get(id);
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
    // The runner closes the journal last (after every answer and lookup); a write after that is a
    // defect, said as one rather than as a RangeError from a closed descriptor.
    if (this.#fd < 0)
      throw new JournalError(
        `journal ${this.dir}: a ${recs[0]!.k} record came after the journal was closed and was not written (the runner closes its journal only after every request has its answer: report this)`,
      );
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
    const wall = Date.now();
    const rec = { k: 'intent', intent, at, wall, marksSent: true } as const;
    this.append(snapshot ? [rec, { k: 'state', snapshot }] : [rec], defer);
  }

  /**
   * The "sent" mark: the request of a journaled intent leaves the process now (its first sending or
   * a resend). A restart waits out only intents marked sent; the others were never sent. `defer` as
   * in `append`.
   */
  sent(id: string, defer = false): void {
    const i = this.#intents.get(id);
    if (i === undefined || i.confirmed) return;
    this.append([{ k: 'sent', id, wall: Date.now() }], defer);
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

  /**
   * Records that the kill switch engaged (durable before it returns): a runner on this journal
   * trades nothing until `clearHalt`. A halt already in force is kept (its first time and reason).
   */
  halt(halt: Halt): void {
    if (this.#halt !== undefined) return;
    this.append([{ k: 'halt', halt }]);
  }

  /** Ends the halt in force (the operator's `fxflow journal clear-halt`); the halt it was, if any. */
  clearHalt(): Halt | undefined {
    const was = this.#halt;
    if (was !== undefined) this.append([{ k: 'halt', halt: null }]);
    return was;
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
      throw new JournalError(
        `rebase to transaction ${baseline.lastTransactionID} while the strategy has handled only up to ${snapshot.handledTransactionID}: its snapshot would miss transactions`,
      );
    }
    this.append([
      { k: 'state', snapshot },
      { k: 'baseline', baseline },
    ]);
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
        this.#intents.set(r.intent.id, {
          intent: r.intent,
          at: r.at,
          ...(r.wall !== undefined ? { wall: r.wall } : {}),
          afterTransactionID: this.#lastID,
          ...(r.marksSent === true ? { marksSent: true } : {}),
          confirmed: false,
        });
        return;
      case 'sent': {
        const i = this.#intents.get(r.id);
        if (i) i.sentAt = r.wall;
        return;
      }
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
      case 'halt':
        this.#halt = r.halt ?? undefined;
        return;
    }
  }

  /**
   * Folds the log into the snapshot file and empties the log. Durable order: temp file written and
   * fsynced, renamed over the snapshot, directory fsynced, then the log truncated.
   */
  compact(): void {
    const snap: SnapshotFile = {
      version: 2,
      upTo: this.#n,
      intents: [...this.#intents.values()],
      transactions: this.#transactions,
      lastTransactionID: this.#lastID,
      state: this.#state,
      baseline: this.#baseline,
      ...(this.#riskDay ? { riskDay: this.#riskDay } : {}),
      ...(this.#halt ? { halt: this.#halt } : {}),
    };
    const tmp = join(this.dir, `${SNAPSHOT}.tmp`);
    const fd = openSync(tmp, 'w');
    try {
      const body = JSON.stringify(snap);
      const raw = Buffer.from(body, 'utf8');
      const envelope: SnapshotEnvelope = {
        fxflowJournalSnapshot: 2,
        bytes: raw.length,
        crc32: crc32(raw).toString(16).padStart(8, '0'),
        body,
      };
      const b = Buffer.from(JSON.stringify(envelope), 'utf8');
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

  /** Syncs, closes the log and releases the lock. */
  close(): void {
    if (this.#fd >= 0) {
      this.sync();
      closeSync(this.#fd);
      this.#fd = -1;
    }
    if (this.#lock !== undefined) releaseLock(this.#lock);
    this.#lock = undefined;
  }
}
