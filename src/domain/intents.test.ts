import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type OrderIntent, withClientID } from './intents.ts';
import type { OrderRequest } from './v20/index.ts';

// The one `withClientID` (the v20 adapter, the simulator, the risk gate and the shadow all use it):
// the request as v20 gets it carries the intent's ID as `clientExtensions.id`, every other field of
// the request and of its extensions kept, and the intent given is never changed.
const ext = fc.option(
  fc.record(
    {
      id: fc.option(fc.string(), { nil: undefined }),
      tag: fc.option(fc.string(), { nil: undefined }),
      comment: fc.option(fc.string(), { nil: undefined }),
    },
    { requiredKeys: [] },
  ),
  { nil: undefined },
);
const request = fc.record(
  {
    type: fc.constantFrom('MARKET', 'LIMIT', 'STOP'),
    instrument: fc.constantFrom('EUR_USD', 'USD_JPY'),
    units: fc.integer({ min: -10_000, max: 10_000 }).map(String),
    clientExtensions: ext,
  },
  { requiredKeys: ['type', 'instrument', 'units'] },
);
const intent = fc
  .tuple(fc.constantFrom('order', 'replace'), fc.string({ minLength: 1 }), request)
  .map(([kind, id, r]): OrderIntent =>
    kind === 'order'
      ? { kind, id, request: r as unknown as OrderRequest }
      : { kind, id, orderSpecifier: '7', request: r as unknown as OrderRequest },
  );

describe('withClientID', () => {
  it('sets clientExtensions.id to the intent ID, keeps every other field, changes nothing given, and is idempotent', () => {
    fc.assert(
      fc.property(intent, (i) => {
        const before = structuredClone(i);
        const out = withClientID(i) as Extract<OrderIntent, { request: OrderRequest }>;
        const r = (i as Extract<OrderIntent, { request: OrderRequest }>).request as unknown as Record<
          string,
          unknown
        >;
        expect(out.request).toEqual({
          ...r,
          clientExtensions: { ...(r.clientExtensions as object | undefined), id: i.id },
        });
        expect(i).toEqual(before);
        expect(withClientID(out)).toEqual(out);
      }),
    );
  });

  it('returns intents without an order request as they are', () => {
    const cancel: OrderIntent = { kind: 'cancel', id: 'c-1', orderSpecifier: '12' };
    expect(withClientID(cancel)).toBe(cancel);
  });
});
