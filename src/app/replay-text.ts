// The reconciliation's text (reconciliation.txt) and the writing of reconciliation.json and .txt.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DecisionDiff } from '../runner/recording/reconcile.ts';
import type { Reconciliation } from './replay-reconciliation.ts';

/** reconciliation.txt: the summary first, then every difference with its cause. */
export function reconciliationText(r: Reconciliation): string {
  const L: string[] = [];
  L.push(`Reconciliation of ${r.folder}`);
  L.push(
    `strategy ${r.strategy.file} (sha256 ${r.strategy.sha256.slice(0, 12)}${r.strategy.changed ? `, CHANGED since the run: recorded ${r.strategy.recordedSha256.slice(0, 12)}` : ', as recorded'}); simulator fills market orders at the ${r.fill === 'current' ? 'price current when decided' : 'next price'}; fill models: slippage ${r.models.slippage} · latency ${r.models.latency} · commission ${r.models.commission}`,
  );
  L.push(
    `inputs: ${r.sessions} session${r.sessions === 1 ? '' : 's'}, ${r.records.ticks} ticks, ${r.records.candles} candles, ${r.records.labs} labs events, ${r.records.transactions} transactions, ${r.records.intents} intents`,
  );
  for (const c of r.cuts) L.push(c);
  L.push(
    `differences: ${r.differences} (decisions ${r.decisions.differ}, fills ${r.fills.differ}${
      Object.keys(r.fills.byCause).length > 0
        ? `: ${Object.entries(r.fills.byCause)
            .map(([c, n]) => `${c} ${n}`)
            .join(', ')}`
        : ''
    }; realized P/L ${r.money.realizedPLDiff}, financing ${r.money.financingDiff}, commission ${r.money.commissionDiff})`,
  );
  L.push(`decisions: live ${r.decisions.live}, replay ${r.decisions.replay}, differ ${r.decisions.differ}`);
  const f = r.decisions.firstParting;
  if (f !== undefined) {
    const ev = (x: DecisionDiff['live']): string =>
      x === undefined
        ? 'none'
        : `${x.intent} after ${x.after !== undefined ? `${x.after.kind} at ${x.after.time} (${x.after.where})` : 'an unknown event'}`;
    L.push(
      `  first parting at decision ${f.index + 1} (${f.what}): live ${ev(f.live)}; replay ${ev(f.replay)}`,
    );
  }
  L.push(`fills: ${r.fills.compared} intents with orders compared, ${r.fills.differ} differ`);
  for (const d of r.fills.diffs) {
    L.push(
      `  ${d.liveID}: ${d.cause}: ${d.explanation}${d.priceDiff !== undefined ? ` (Δprice ${d.priceDiff.toFixed(6)})` : ''}${d.timeDiffMs !== undefined && d.timeDiffMs !== 0 ? ` (Δt ${d.timeDiffMs} ms)` : ''}`,
    );
  }
  const dr = r.drift;
  if (dr !== undefined) {
    L.push(
      `drift guard of the run (--max-drift ${dr.tolerances}): ${dr.pastTolerance.length > 0 ? `past ${dr.pastTolerance.join(' and ')} against the replay` : 'within its tolerances against the replay'}; ${dr.fills.filter((f) => f.what === 'price').length} fill(s) past the price tolerance, ${dr.missed} on one side only`,
    );
    for (const f of dr.fills)
      L.push(
        `  drifted: ${f.clientID} ${f.instrument}: ${f.what === 'price' ? `live ${f.live} replay ${f.replay} (${f.pips!.toFixed(1)} pips)` : `live ${f.live ?? 'no fill'}, replay ${f.replay ?? 'no fill'}`}`,
      );
    for (const h of dr.halts) L.push(`  the live guard halted the run: ${h}`);
  }
  L.push(
    `money: live realized P/L ${r.money.live.realizedPL}, financing ${r.money.live.financing}, commission ${r.money.live.commission}, balance ${r.money.live.balance}, ${r.money.live.fills} fills`,
  );
  L.push(
    `       replay realized P/L ${r.money.replay.realizedPL}, financing ${r.money.replay.financing}, commission ${r.money.replay.commission}, balance ${r.money.replay.balance}, ${r.money.replay.fills} fills`,
  );
  for (const x of r.restarts)
    L.push(
      `restart: session ${x.session} at ${x.at} (the session before ended: ${x.previousStop}): the live strategy ${x.restoredState ? 'resumed from its journal' : 'started afresh'} (client-ID sequence ${x.sequenceLive}; the replay, running on in one piece, was at ${x.sequenceReplay})`,
    );
  if (r.problems.length > 0) {
    L.push('inputs that could not be used as they are:');
    for (const p of r.problems) L.push(`  ${p}`);
  }
  return `${L.join('\n')}\n`;
}

/** Writes reconciliation.json and reconciliation.txt into `out`; returns their paths. */
export function writeReconciliation(r: Reconciliation, out: string): { json: string; txt: string } {
  const json = join(out, 'reconciliation.json');
  const txt = join(out, 'reconciliation.txt');
  writeFileSync(json, `${JSON.stringify(r, null, 2)}\n`);
  writeFileSync(txt, reconciliationText(r));
  return { json, txt };
}
