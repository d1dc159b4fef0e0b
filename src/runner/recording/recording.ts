import { createReadStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants as zlib, createGunzip } from 'node:zlib';
import type { Candle } from '../../domain/candle.ts';
import type { AccountState } from '../../domain/account-state.ts';
import type { MarketEvent } from '../../domain/events.ts';
import type { OrderIntent } from '../../domain/intents.ts';
import type { Transaction } from '../../domain/v20/index.ts';

// The format of a live run folder's recorded inputs (docs/replay.md): run.json and
// inputs-NNNNNN.jsonl.gz files, read back here for `fxflow replay`.

export const RUN_JSON = 'run.json';
/** The n-th input file of a run folder (1-based): `inputs-000001.jsonl.gz`. */
export const INPUT_FILE = (n: number): string => `inputs-${String(n).padStart(6, '0')}.jsonl.gz`;
const INPUT_RE = /^inputs-\d{6}\.jsonl\.gz$/;

/**
 * The account a session started from, as the replay's simulator is seeded. `v20`: the account as
 * OANDA reported it at the start (open trades with their dependent orders, pending orders, totals).
 * `sim` (`--broker sim`): the simulated account's deposit and, after a restart from its journal, its
 * state (`SimBroker.snapshot()`).
 */
export type SessionAccount =
  | ({
      readonly broker: 'v20';
      readonly currency: string;
      readonly marginRate: string;
      readonly hedging: boolean;
    } & AccountState)
  | {
      readonly broker: 'sim';
      readonly currency: string;
      readonly marginRate: string;
      readonly hedging: boolean;
      readonly deposit: string;
      readonly state?: AccountState;
    };

/** One start of `fxflow run` in this folder; a restart adds one. */
export interface SessionInfo {
  readonly n: number;
  readonly runId: string;
  /** The strategy file's sha256 when this session started (a restart may run an edited file). */
  readonly strategySha256?: string;
  readonly clientIdPrefix: string;
  readonly sequence: number;
  readonly restoredState: boolean;
  readonly start: string;
  stop?: string;
  reason?: string;
  readonly firstSeq: number;
  lastSeq?: number;
  readonly files: string[];
  bytes?: number;
  records?: Record<string, number>;
  capped?: boolean;
  readonly account: SessionAccount;
}

/** run.json. */
export interface RunMeta {
  readonly format: 1;
  readonly fxflow: string;
  readonly strategy: { readonly file: string; readonly name: string; readonly sha256: string };
  readonly params: Record<string, unknown>;
  /** A portfolio run's strategies (`strategy` is then the portfolio's: its label and name). */
  readonly portfolio?: readonly {
    readonly file: string;
    readonly name: string;
    readonly sha256: string;
    readonly params: Record<string, unknown>;
  }[];
  readonly env: string;
  readonly accountID: string;
  readonly broker: 'v20' | 'sim';
  /** The series and streams the strategy subscribed to (candles `instrument:granularity[:component]`, ticks, labs). */
  readonly subscriptions: {
    readonly candles: readonly string[];
    readonly ticks: readonly string[];
    readonly signals: readonly string[];
    readonly calendar: readonly string[];
    readonly spreads?: readonly string[];
    readonly cot?: readonly string[];
  };
  /** The run's configuration: risk limits, candles source and wait, fill models (--broker sim), flags. */
  readonly config: Record<string, unknown>;
  readonly sessions: SessionInfo[];
}

/** One recorded line, by kind (`seq`: its number across the folder; `rt`: wall-clock ms it was received). */
export type InputRecord =
  | {
      readonly k: 'session';
      readonly seq: number;
      readonly rt: number;
      readonly event: 'start' | 'stop';
      readonly session: number;
      readonly runId?: string;
      readonly reason?: string;
    }
  | {
      readonly k: 'tick';
      readonly seq: number;
      readonly rt: number;
      readonly i: string;
      readonly t: number;
      readonly b: number;
      readonly a: number;
    }
  | {
      readonly k: 'candle';
      readonly seq: number;
      readonly rt: number;
      readonly src: 'official' | 'ticks' | 'warmup';
      readonly c: Candle;
      readonly px?: { readonly i: string; readonly t: number; readonly b: number; readonly a: number };
    }
  | { readonly k: 'labs'; readonly seq: number; readonly rt: number; readonly e: MarketEvent }
  | { readonly k: 'tx'; readonly seq: number; readonly rt: number; readonly tx: Transaction }
  | {
      readonly k: 'intent';
      readonly seq: number;
      readonly rt: number;
      readonly after: number;
      readonly t: number;
      readonly intent: OrderIntent;
    }
  | { readonly k: 'capped'; readonly seq: number; readonly rt: number; readonly bytes: number }
  /** What became of one attempt to send an intent (`n` 0: the first send): `sent`, `answered`, an HTTP status, `timeout`, `network error`, `found`, `not found`. */
  | {
      readonly k: 'attempt';
      readonly seq: number;
      readonly rt: number;
      readonly id: string;
      readonly n: number;
      readonly what: string;
    };

/** Where a record came from: its file and line (1-based), for messages. */
export interface Where {
  readonly file: string;
  readonly line: number;
}

/** A run folder that cannot be replayed at all (no run.json, no inputs): the message says how to get one. */
export class RecordingError extends Error {
  readonly code = 'RECORDING' as const;
  constructor(message: string) {
    super(message);
    this.name = 'RecordingError';
  }
}

const isObj = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);
const isNum = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

/** Reads and checks run.json; throws RecordingError naming the file and how to get a replayable folder. */
export function readRunMeta(dir: string): RunMeta {
  const path = join(dir, RUN_JSON);
  const how =
    'a live run folder is what `fxflow run` writes under runs/live/ (or --out); run the strategy with `fxflow run` to record one';
  if (!existsSync(dir)) throw new RecordingError(`${dir} does not exist: give a run folder; ${how}`);
  if (!existsSync(path)) {
    const backtest = existsSync(join(dir, 'summary.json')) || existsSync(join(dir, 'transactions.jsonl'));
    throw new RecordingError(
      `${dir} has no ${RUN_JSON}: ${backtest ? "it is a backtest's run folder, which has no live inputs to replay" : 'it is not a live run folder'}; ${how}`,
    );
  }
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new RecordingError(
      `${path} is not valid JSON (${(e as Error).message}); it is written once per session start and stop, so a damaged one means the folder was edited: restore it or record the run again`,
    );
  }
  if (!isObj(doc) || doc.format !== 1)
    throw new RecordingError(
      `${path}: field "format" is ${isObj(doc) ? JSON.stringify(doc.format) : 'missing'}, expected 1 (a run folder of this fxflow)`,
    );
  for (const f of ['accountID', 'env', 'broker'] as const)
    if (typeof doc[f] !== 'string')
      throw new RecordingError(`${path}: field "${f}" is missing or not a string`);
  if (
    !isObj(doc.strategy) ||
    typeof doc.strategy.file !== 'string' ||
    typeof doc.strategy.sha256 !== 'string'
  )
    throw new RecordingError(`${path}: field "strategy" needs "file" and "sha256"`);
  if (!Array.isArray(doc.sessions) || doc.sessions.length === 0)
    throw new RecordingError(`${path}: no sessions: the run never started recording; ${how}`);
  for (const [i, s] of (doc.sessions as unknown[]).entries()) {
    if (!isObj(s) || !Array.isArray(s.files) || !isObj(s.account) || typeof s.clientIdPrefix !== 'string')
      throw new RecordingError(`${path}: sessions[${i}] needs "files", "account" and "clientIdPrefix"`);
  }
  return doc as unknown as RunMeta;
}

/** The input files of a folder in order: those run.json names, and any it does not (a session cut off before its entry was updated). */
export function inputFiles(dir: string, meta: RunMeta): { files: string[]; missing: string[] } {
  const named = meta.sessions.flatMap((s) => s.files);
  const onDisk = existsSync(dir) ? readdirSync(dir).filter((f) => INPUT_RE.test(f)) : [];
  const all = [...new Set([...named, ...onDisk])].sort();
  return {
    files: all.filter((f) => existsSync(join(dir, f))),
    missing: named.filter((f) => !existsSync(join(dir, f))),
  };
}

/** Checks one parsed line; returns a reason when it is not a record of a known kind with its fields. */
function check(
  x: unknown,
): { ok: true; rec: InputRecord } | { ok: false; unknownKind?: string; why: string } {
  if (!isObj(x) || typeof x.k !== 'string' || !isNum(x.seq))
    return { ok: false, why: 'not a record (needs "k" and "seq")' };
  switch (x.k) {
    case 'session':
      return (x.event === 'start' || x.event === 'stop') && isNum(x.session)
        ? { ok: true, rec: x as never }
        : { ok: false, why: 'a session record needs "event" start|stop and "session"' };
    case 'tick':
      return typeof x.i === 'string' && isNum(x.t) && isNum(x.b) && isNum(x.a)
        ? { ok: true, rec: x as never }
        : { ok: false, why: 'a tick needs "i", "t", "b" and "a"' };
    case 'candle':
      return isObj(x.c) && x.c.kind === 'candle' && isNum(x.c.at) && typeof x.c.instrument === 'string'
        ? { ok: true, rec: x as never }
        : { ok: false, why: 'a candle record needs "c" (a candle with instrument and at)' };
    case 'labs':
      return isObj(x.e) && isNum(x.e.at) && typeof x.e.kind === 'string'
        ? { ok: true, rec: x as never }
        : { ok: false, why: 'a labs record needs "e" (an event with kind and at)' };
    case 'tx':
      return isObj(x.tx) &&
        typeof x.tx.id === 'string' &&
        typeof x.tx.type === 'string' &&
        typeof x.tx.time === 'string'
        ? { ok: true, rec: x as never }
        : { ok: false, why: 'a tx record needs "tx" (a v20 transaction with id, type and time)' };
    case 'intent':
      return isObj(x.intent) &&
        typeof x.intent.kind === 'string' &&
        typeof x.intent.id === 'string' &&
        isNum(x.after)
        ? { ok: true, rec: x as never }
        : { ok: false, why: 'an intent record needs "intent" (with kind and id) and "after"' };
    case 'capped':
      return { ok: true, rec: x as never };
    case 'attempt':
      return typeof x.id === 'string' && isNum(x.n) && typeof x.what === 'string'
        ? { ok: true, rec: x as never }
        : { ok: false, why: 'an attempt record needs "id", "n" and "what"' };
    default:
      return { ok: false, unknownKind: x.k, why: `unknown kind "${x.k}"` };
  }
}

/** What reading a folder's inputs found wrong, for the reconciliation's messages. */
export interface ReadProblems {
  /** Messages naming file and line; the first few of each kind. */
  readonly messages: string[];
  /** Lines skipped: not JSON or missing fields. */
  damaged: number;
  /** Records of an unknown kind, skipped. */
  unknown: number;
  /** A file cut short (a torn last line, a gzip stream without its end). */
  truncated: number;
}

/**
 * Reads every input record of a folder in order, calling `fn` for each (with its file and line).
 * Nothing stops it but a missing folder: a damaged line is skipped and named (file, line), a record
 * of an unknown kind is skipped and counted, a file cut short (a torn last line, a gzip stream whose
 * end is missing or damaged) is read up to the damage and named, and the next file is read.
 */
export async function readInputs(
  dir: string,
  files: readonly string[],
  fn: (rec: InputRecord, where: Where) => void,
): Promise<ReadProblems> {
  const p: ReadProblems = { messages: [], damaged: 0, unknown: 0, truncated: 0 };
  const say = (what: 'damaged' | 'unknown', msg: string): void => {
    if (p[what] <= 3) p.messages.push(msg);
  };
  for (const file of files) {
    let line = 0;
    let rest = '';
    const take = (text: string, final: boolean): void => {
      let from = 0;
      for (let nl = text.indexOf('\n', from); nl >= 0; nl = text.indexOf('\n', from)) {
        line++;
        const l = text.slice(from, nl);
        from = nl + 1;
        if (l === '') continue;
        let x: unknown;
        try {
          x = JSON.parse(l);
        } catch {
          p.damaged++;
          say('damaged', `${file} line ${line}: not a JSON line (${l.slice(0, 40)}…): skipped`);
          continue;
        }
        const c = check(x);
        if (c.ok) fn(c.rec, { file, line });
        else if (c.unknownKind !== undefined) {
          p.unknown++;
          say('unknown', `${file} line ${line}: ${c.why}, written by a newer fxflow or edited: skipped`);
        } else {
          p.damaged++;
          say('damaged', `${file} line ${line}: ${c.why}: skipped`);
        }
      }
      rest = text.slice(from);
      if (final && rest !== '') {
        p.truncated++;
        p.messages.push(
          `${file} line ${line + 1} is cut short (a run killed while writing, or a damaged file): replayed up to line ${line}`,
        );
        rest = '';
      }
    };
    let gzipError: Error | undefined;
    await new Promise<void>((res) => {
      // Z_SYNC_FLUSH: a stream without its end (a killed run's last file) yields what it holds.
      const gunzip = createGunzip({ finishFlush: zlib.Z_SYNC_FLUSH });
      const input = createReadStream(join(dir, file));
      gunzip.setEncoding('utf8');
      gunzip.on('data', (d: string) => take(rest + d, false));
      const done = (): void => res();
      gunzip.on('end', done);
      gunzip.on('error', (e) => {
        gzipError = e;
        input.destroy();
        done();
      });
      input.on('error', (e) => {
        gzipError = e;
        done();
      });
      input.pipe(gunzip);
    });
    if (gzipError !== undefined) {
      if (rest !== '') take(rest, true);
      else {
        p.truncated++;
        p.messages.push(
          `${file} is damaged after line ${line} (${gzipError.message}): replayed up to line ${line}`,
        );
      }
    } else take(rest, true);
  }
  return p;
}
