import type { LedgerOrder } from '../../domain/ledger.ts';
import { parseTime, type UnixMs } from '../../domain/time.ts';
import type { TransactionNote } from '../../domain/transaction-note.ts';
import type { ClientExtensions, Transaction } from '../../domain/v20/index.ts';
import type { MarketRequest } from './book.ts';
import type { Draft } from './draft.ts';

/**
 * Order-creating transactions as notes: a MARKET_ORDER and the common on-fill dependent orders
 * are held as the values they are made of, their v20 objects built only when a reader asks (the
 * pending order's `created`, or the delivered note's `transaction()`: the same object for both).
 */

/**
 * The pending order of a MARKET_ORDER from its request (book.ts `MarketRequest`), until its fill
 * or cancel: the ledger's fields, and `created`, the transaction, built at the first read as the
 * fill path built it before (the request's fields in their order, `units` replaced, the stamp).
 */
export class MarketOrderEntry implements LedgerOrder {
  readonly type = 'MARKET';
  readonly tradeID = undefined;
  #created: Transaction | undefined = undefined;

  constructor(
    readonly id: string,
    readonly instrument: string,
    public clientExtensions: ClientExtensions | undefined,
    private readonly request: MarketRequest,
    private readonly units: number,
    private readonly time: string,
    private readonly accountID: string,
    private readonly batchID: string,
    private readonly stats: { orderObjects: number },
  ) {}

  get created(): Transaction {
    if (this.#created === undefined) {
      const d: Draft = Object.assign(
        { type: 'MARKET_ORDER' },
        this.request as unknown as Record<string, unknown>,
      );
      d.units = String(this.units);
      d.id = this.id;
      d.time = this.time;
      d.userID = 1;
      d.accountID = this.accountID;
      d.batchID = this.batchID;
      this.#created = d as unknown as Transaction;
      this.stats.orderObjects++;
    }
    return this.#created;
  }
}

/**
 * An order-creating transaction held as values, delivered: its type, ID, time, reason and client
 * ID read at once, the object from its pending order (`created`) when asked. Reused by the log for
 * the next one (one per delivery depth), as every note.
 */
export class CreateNote implements TransactionNote {
  type = '';
  id = '';
  idNum = 0;
  reason: string | undefined = undefined;
  clientExtensionsID: string | undefined = undefined;
  readonly orderID = undefined;
  readonly rejectReason = undefined;
  readonly price = Number.NaN;
  #time = '';
  #order: LedgerOrder | undefined = undefined;

  get at(): UnixMs {
    return parseTime(this.#time);
  }

  transaction(): Transaction {
    return this.#order!.created;
  }

  set(
    type: string,
    id: string,
    idNum: number,
    time: string,
    reason: string,
    clientExtensionsID: string | undefined,
    order: LedgerOrder,
  ): this {
    this.type = type;
    this.id = id;
    this.idNum = idNum;
    this.#time = time;
    this.reason = reason;
    this.clientExtensionsID = clientExtensionsID;
    this.#order = order;
    return this;
  }
}
