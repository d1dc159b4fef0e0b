/**
 * Why a trial failed: because of the trial itself (the strategy threw, the objective is not a
 * number: running it again gives the same failure, so it stays failed), or because of what ran it
 * (the thread died under it, BullMQ lost its lock, Redis went away: the trial says nothing about
 * the strategy, so it runs again, live and when the sweep is resumed).
 */

/** Error texts of infrastructure failures recorded before trials carried the flag (sweep folders of older versions). */
const INFRASTRUCTURE = /^(worker died|the queue failed the trial|the queue lost the trial): /;

export function isInfrastructureFailure(f: {
  readonly error?: string | undefined;
  readonly infrastructure?: boolean | undefined;
}): boolean {
  return f.infrastructure === true || (f.error !== undefined && INFRASTRUCTURE.test(f.error));
}

/** How many times a sweep runs a trial whose runs failed for infrastructure reasons before it records the last failure. */
export const INFRASTRUCTURE_ATTEMPTS = 3;
