/**
 * The marks of a trial's claim cell (pool.ts): while a trial handed to a thread is unclaimed its
 * cell holds the trial's ticket; the thread about to run it swaps the ticket for CLAIMED, the main
 * thread taking it back for TAKEN_BACK, by compare-and-swap, so exactly one of them runs it.
 * Tickets are positive; the marks are not.
 */
export const CLAIMED = -1;
export const TAKEN_BACK = -2;
