// Seeding the simulator from an existing account (`SimBroker.seed`, `SimBroker.snapshot`): the
// simulator's names for the account-state restore in src/domain/account-state.ts, which the live
// runner's portfolio uses too (one code path restores an account into a ledger).
import { AccountStateError, type AccountState, type AccountTrade } from '../../domain/account-state.ts';

export { orderCreateOf, orderOf, restoreAccount, type Restored, tradeSummaryOf } from '../../domain/account-state.ts';

/** An open trade as v20 lists it (TradeSummary or Trade): see `AccountTrade`. */
export type SeedTrade = AccountTrade;

/** An account state a simulator can start from, and `SimBroker.snapshot()`'s form: see `AccountState`. */
export type SimAccountState = AccountState;

/** An account state that cannot be restored (a broken field): `AccountStateError`, the same class. */
export const SimSeedError = AccountStateError;
export type SimSeedError = AccountStateError;
