export type * from './primitives.ts';
export type * from './orders.ts';
export type * from './transactions.ts';
export type * from './pricing.ts';
export type * from './instrument.ts';
export type * from './account.ts';
export * from './parse.ts';
