import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkManifest, manifestFile, readManifest } from './recording-manifest.ts';

let root = '';
afterEach(() => rmSync(root, { recursive: true, force: true }));

const base = {
  environment: 'practice',
  accountID: null,
  instruments: ['GBP_USD', 'EUR_USD'],
  currencies: ['USD'],
  kinds: ['calendar'],
};

describe('recording.json', () => {
  it('is written by the first recorder, grows by kind, takes the first account, and refuses another account or instrument set unless allowed', () => {
    root = mkdtempSync(join(tmpdir(), 'fxflow-manifest-'));
    const at = new Date('2024-01-02T12:00:00Z');
    checkManifest(root, base, false, at);
    expect(readManifest(root)).toEqual({
      environment: 'practice',
      accountID: null,
      instruments: ['EUR_USD', 'GBP_USD'],
      currencies: ['USD'],
      kinds: ['calendar'],
      created: at.toISOString(),
      updated: at.toISOString(),
    });
    // The same set in another order, another kind, and now an account: the same recording.
    checkManifest(
      root,
      { ...base, instruments: ['EUR_USD', 'GBP_USD'], accountID: '101-1', kinds: ['prices'] },
      false,
    );
    expect(readManifest(root)).toMatchObject({
      accountID: '101-1',
      kinds: ['calendar', 'prices'],
      created: at.toISOString(),
    });
    expect(() => checkManifest(root, { ...base, accountID: '101-2' }, false)).toThrow(
      /recording\.json \(account\): this catalog holds a recording of account 101-1 \(practice\), instruments EUR_USD,GBP_USD, currencies USD; this recorder is for account 101-2 \(practice\), instruments EUR_USD,GBP_USD, currencies USD\..*--allow-mismatch/,
    );
    expect(() =>
      checkManifest(root, { ...base, environment: 'live', instruments: ['EUR_USD'] }, false),
    ).toThrow(/recording\.json \(environment, instruments\)/);
    const before = readFileSync(manifestFile(root), 'utf8');
    expect(() => checkManifest(root, { ...base, currencies: ['EUR'] }, false)).toThrow(/\(currencies\)/);
    expect(readFileSync(manifestFile(root), 'utf8')).toBe(before); // a refusal writes nothing
    const { replaced, manifest } = checkManifest(
      root,
      { ...base, accountID: '101-2', instruments: ['USD_JPY'] },
      true,
    );
    expect(replaced).toBe(true);
    expect(manifest).toMatchObject({
      accountID: '101-2',
      instruments: ['USD_JPY'],
      previous: [{ accountID: '101-1', instruments: ['EUR_USD', 'GBP_USD'] }],
    });
  });

  it('a damaged manifest is an error naming the file', () => {
    root = mkdtempSync(join(tmpdir(), 'fxflow-manifest-'));
    writeFileSync(manifestFile(root), '{"environment": "practice",');
    expect(() => checkManifest(root, base, false)).toThrow(/recording\.json: is not valid JSON/);
    writeFileSync(
      manifestFile(root),
      '{"environment": "practice", "accountID": 5, "instruments": [], "currencies": [], "kinds": []}',
    );
    expect(() => readManifest(root)).toThrow(/recording\.json: must be \{"environment", "accountID"/);
  });
});
