import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabsCotEntry } from '../adapters/v20/labs.ts';
import { startSandbox, type Sandbox } from './server.ts';
import { call } from './testkit.ts';

/** The sandbox's generated Commitments of Traders: a Tuesday's report is served from its publication, Friday 15:30 New York. */

const iso = (ms: number): string => new Date(ms).toISOString();

describe('the sandbox serves a generated COT report from its publication', () => {
  let sb: Sandbox;
  beforeAll(async () => {
    sb = await startSandbox({ feed: false, clock: 'manual', start: '2024-01-12T20:29:00Z' });
  });
  afterAll(async () => {
    await sb?.close();
  });
  const newest = async (): Promise<string> => {
    const r = await call('GET', `${sb.url}/labs/v1/commitments_of_traders?instrument=EUR_USD`);
    const list = r.body.EUR_USD as LabsCotEntry[];
    expect(list).toHaveLength(5);
    return iso(list[list.length - 1]!.date * 1000);
  };

  it('not the Tuesday report before Friday 15:30 New York; then it', async () => {
    // Friday 2024-01-12 15:29 New York: the newest is the report of Tuesday 2 January.
    expect(await newest()).toBe('2024-01-02T21:00:00.000Z');
    sb.setTime('2024-01-12T20:30:00Z');
    expect(await newest()).toBe('2024-01-09T21:00:00.000Z');
  });
});
