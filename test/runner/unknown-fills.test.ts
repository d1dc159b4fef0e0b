// The unknown-fill watch (src/runner/unknown-fills.ts) on generated transaction sequences: a fill
// is unknown exactly when its order is a second one under a client ID, an order of an intent given
// up, or one under a client ID the run never journaled (or none); closes never count.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../src/domain/v20/index.ts';
import { UnknownFills } from '../../src/runner/order-path/unknown-fills.ts';

/** One order placed on the account: under which client ID (undefined: none), and whether it is a close. */
interface Placed {
  readonly cid: string | undefined;
  readonly close: boolean;
}

/** The transactions v20 writes for `placed`, in ID order: each order's create, then its fill. */
function transactions(placed: readonly Placed[]): Transaction[] {
  const out: Transaction[] = [];
  let id = 100;
  for (const p of placed) {
    const order = String(++id);
    out.push({
      id: order,
      type: 'MARKET_ORDER',
      time: '2024-01-02T10:00:00.000000000Z',
      instrument: 'EUR_USD',
      units: '1000',
      reason: p.close ? 'TRADE_CLOSE' : 'CLIENT_ORDER',
      ...(p.close ? { tradeClose: { tradeID: '5', units: 'ALL' } } : {}),
      ...(p.cid !== undefined ? { clientExtensions: { id: p.cid } } : {}),
    } as unknown as Transaction);
    out.push({
      id: String(++id),
      type: 'ORDER_FILL',
      time: '2024-01-02T10:00:00.000000000Z',
      orderID: order,
      instrument: 'EUR_USD',
      units: '1000',
      ...(p.cid !== undefined ? { clientOrderID: p.cid } : {}),
    } as unknown as Transaction);
  }
  return out;
}

describe('UnknownFills', () => {
  it('property: the unknown fills are exactly the second orders under a client ID, the orders of intents given up and the orders never journaled; closes never', () => {
    const cids = ['run-a-1', 'run-a-2', 'run-a-3', 'other-1'];
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ cid: fc.option(fc.constantFrom(...cids), { nil: undefined }), close: fc.boolean() }),
          { maxLength: 30 },
        ),
        fc.subarray(cids),
        fc.subarray(cids),
        (placed, journaled, gaveUp) => {
          const watch = new UnknownFills({
            journaled: (c) => journaled.includes(c),
            gaveUp: (c) => gaveUp.includes(c),
          });
          const found = transactions(placed)
            .map((t) => watch.observe(t))
            .filter((u) => u !== undefined);
          const seen = new Set<string>();
          const expected: string[] = [];
          for (const p of placed) {
            if (p.close) continue;
            const why =
              p.cid === undefined || !journaled.includes(p.cid)
                ? 'never placed'
                : seen.has(p.cid)
                  ? 'duplicate'
                  : gaveUp.includes(p.cid)
                    ? 'given up'
                    : undefined;
            if (p.cid !== undefined) seen.add(p.cid);
            if (why !== undefined) expected.push(`${p.cid}:${why}`);
          }
          expect(found.map((u) => `${u.clientID}:${u.why}`)).toEqual(expected);
          expect(watch.found).toHaveLength(expected.length);
        },
      ),
    );
  });

  it('an order journaled before this start counts for the duplicate test, and seeing its own create again (a replay) is not a duplicate', () => {
    const [create, fill] = transactions([{ cid: 'run-a-1', close: false }]);
    const watch = new UnknownFills({ journaled: () => true, gaveUp: () => false }, [create!]);
    expect(watch.observe(create!)).toBeUndefined();
    expect(watch.observe(fill!)).toBeUndefined();
    const again = transactions([
      { cid: 'run-a-1', close: false },
      { cid: 'run-a-1', close: false },
    ]).slice(2);
    expect(watch.observe(again[0]!)).toBeUndefined();
    expect(watch.observe(again[1]!)).toMatchObject({ clientID: 'run-a-1', why: 'duplicate' });
  });
});
