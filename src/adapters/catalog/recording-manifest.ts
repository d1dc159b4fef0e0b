import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DataError } from './errors.ts';

/**
 * `<catalog>/recording.json`: what a catalog's recordings belong to. A recording is of one
 * account (prices and financing are an account's: its pricing, its instruments' rates) and one set
 * of instruments and currencies; `fxflow record` refuses to add to a catalog recorded from another
 * account or environment, or with another instrument or currency set, unless told to
 * (`--allow-mismatch`, which keeps the earlier manifest under `previous`).
 */
export interface RecordingManifest {
  /** practice, live or sandbox. */
  readonly environment: string;
  /** The v20 account the prices and financing come from; null for labs only (labs belong to no account). */
  readonly accountID: string | null;
  readonly instruments: readonly string[];
  readonly currencies: readonly string[];
  /** What has been recorded: labs kinds, `prices`, `financing` (grows as kinds are added). */
  readonly kinds: readonly string[];
  /** When this manifest was first written, and last updated (RFC 3339). */
  readonly created: string;
  readonly updated: string;
  /** Earlier manifests replaced with --allow-mismatch, oldest first. */
  readonly previous?: readonly Omit<RecordingManifest, 'previous'>[];
}

export const manifestFile = (root: string): string => join(root, 'recording.json');

const sorted = (xs: readonly string[]): string[] => [...new Set(xs)].sort();
const same = (a: readonly string[], b: readonly string[]): boolean =>
  sorted(a).join(',') === sorted(b).join(',');

/** Reads the manifest, or undefined when the catalog has none; a damaged one is an error naming the file. */
export function readManifest(root: string): RecordingManifest | undefined {
  const file = manifestFile(root);
  if (!existsSync(file)) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new DataError(
      file,
      0,
      '',
      `is not valid JSON (${(e as Error).message}): fix it, or remove it if the catalog's recordings are all of this recorder's account and instruments`,
    );
  }
  const o = v as Record<string, unknown>;
  const list = (k: string): boolean =>
    Array.isArray(o[k]) && (o[k] as unknown[]).every((x) => typeof x === 'string');
  if (
    typeof o !== 'object' ||
    o === null ||
    typeof o.environment !== 'string' ||
    !(o.accountID === null || typeof o.accountID === 'string') ||
    !list('instruments') ||
    !list('currencies') ||
    !list('kinds')
  ) {
    throw new DataError(
      file,
      0,
      '',
      'must be {"environment", "accountID", "instruments": [], "currencies": [], "kinds": [], …} as fxflow record writes it: fix it, or remove it',
    );
  }
  return o as unknown as RecordingManifest;
}

/** What a recorder is about to record. */
export interface RecordingIdentity {
  readonly environment: string;
  readonly accountID: string | null;
  readonly instruments: readonly string[];
  readonly currencies: readonly string[];
  readonly kinds: readonly string[];
}

const describe = (m: RecordingIdentity): string =>
  `${m.accountID !== null ? `account ${m.accountID}` : 'no account (labs only)'} (${m.environment}), instruments ${m.instruments.length > 0 ? sorted(m.instruments).join(',') : '(none)'}, currencies ${m.currencies.length > 0 ? sorted(m.currencies).join(',') : '(none)'}`;

/**
 * Checks a recorder against the catalog's manifest and writes the manifest (created, or updated
 * with the kinds added). A different environment, account, instrument set or currency set is an
 * error naming both, unless `allowMismatch`: then the new identity is written and the old one kept
 * under `previous`. A labs-only manifest (no account) takes the account of the first recorder
 * that has one.
 */
export function checkManifest(
  root: string,
  want: RecordingIdentity,
  allowMismatch: boolean,
  now: Date = new Date(),
): { manifest: RecordingManifest; replaced: boolean } {
  const file = manifestFile(root);
  const had = readManifest(root);
  const stamp = now.toISOString();
  const fresh = (previous?: RecordingManifest['previous']): RecordingManifest => ({
    environment: want.environment,
    accountID: want.accountID,
    instruments: sorted(want.instruments),
    currencies: sorted(want.currencies),
    kinds: sorted(want.kinds),
    created: stamp,
    updated: stamp,
    ...(previous !== undefined && previous.length > 0 ? { previous } : {}),
  });
  let out: RecordingManifest;
  let replaced = false;
  if (had === undefined) out = fresh();
  else {
    const differs: string[] = [];
    if (had.environment !== want.environment) differs.push('environment');
    if (had.accountID !== null && want.accountID !== null && had.accountID !== want.accountID)
      differs.push('account');
    if (!same(had.instruments, want.instruments)) differs.push('instruments');
    if (!same(had.currencies, want.currencies)) differs.push('currencies');
    if (differs.length > 0) {
      if (!allowMismatch) {
        throw new DataError(
          file,
          0,
          differs.join(', '),
          `this catalog holds a recording of ${describe(had)}; this recorder is for ${describe(want)}. A recording belongs to one account and instrument set: record into another --catalog, or pass --allow-mismatch to add to this one anyway (recording.json then keeps the earlier manifest under "previous")`,
        );
      }
      const { previous, ...old } = had;
      out = fresh([...(previous ?? []), old]);
      replaced = true;
    } else {
      out = {
        ...had,
        accountID: had.accountID ?? want.accountID,
        kinds: sorted([...had.kinds, ...want.kinds]),
        updated: stamp,
      };
    }
  }
  mkdirSync(root, { recursive: true });
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(out, null, 2)}\n`);
  renameSync(tmp, file);
  return { manifest: out, replaced };
}
