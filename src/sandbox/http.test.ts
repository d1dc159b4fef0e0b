import { describe, expect, it } from 'vitest';
import { RouteTable } from './http.ts';
import { ok, type Handler } from './v3/context.ts';

const named =
  (name: string): Handler =>
  () =>
    ok({ name });

describe('RouteTable (the /v3 and /sandbox route table)', () => {
  it('finds the first handler of the method and path, with its segments decoded', () => {
    const t = new RouteTable();
    const first = named('first');
    t.on('GET', '/v3/accounts/{accountID}/orders/{orderSpecifier}', first);
    t.on('GET', '/v3/accounts/{accountID}/orders/{orderSpecifier}', named('second'));
    const found = t.find('GET', '/v3/accounts/101-001/orders/%40my%20id');
    expect(found).toEqual({ handler: first, params: ['101-001', '@my id'] });
  });

  it('a path served under other methods gives them, sorted (the 405 and its Allow); an unknown path gives none (the 404)', () => {
    const t = new RouteTable();
    t.on('PUT', '/v3/accounts/{accountID}/orders/{id}/cancel', named('cancel'));
    t.on('POST', '/v3/accounts/{accountID}/orders', named('create'));
    t.on('GET', '/v3/accounts/{accountID}/orders', named('list'));
    expect(t.find('DELETE', '/v3/accounts/1/orders')).toEqual({ allowed: ['GET', 'POST'] });
    expect(t.find('GET', '/v3/accounts/1/orders/2')).toEqual({ allowed: [] });
    // A template segment is one segment: no match across a slash.
    expect(t.find('PUT', '/v3/accounts/1/2/orders/3/cancel')).toEqual({ allowed: [] });
  });
});
