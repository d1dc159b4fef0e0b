// Child process for the kill -9 test: appends transactions in a loop and reports each one whose
// append returned (after fsync) on stdout. The parent kills it with SIGKILL at a random moment.
import { Journal } from '../../src/runner/order-path/journal.ts';

const dir = process.argv[2]!;
const j = Journal.open(dir, { compactEvery: Number(process.argv[3] ?? 50) });
let id = Number(j.lastTransactionID || '0');
for (;;) {
  id++;
  j.transaction({
    id: String(id),
    type: 'DAILY_FINANCING',
    time: '2024-01-02T22:00:00.000000000Z',
    accountID: 'x',
    payload: 'p'.repeat(id % 300),
  } as never);
  process.stdout.write(`${id}\n`);
}
