/** A transaction before the log stamps it (id, time, userID, accountID, batchID): what every part of the simulator builds. */
export type Draft = Record<string, unknown> & { type: string };
