import fc from 'fast-check';
import { mkdtempSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HAS_SHARED, OANDA, warnIfNoShared } from '../../../test/shared.ts';
import {
  parseAutochartist,
  parseCalendar,
  type AutochartistSignal,
  type LabsCalendarEntry,
} from '../v20/labs.ts';
import { LabsIdentity, calendarItemEvent, signalItemEvent, visibleAt, type LabsItem } from './labs-items.ts';
import {
  LabsWriter,
  labsFiles,
  listLabs,
  readLabsItems,
  recordedCalendar,
  recordedSignals,
} from './labs-store.ts';

const entry = (o: Partial<LabsCalendarEntry> = {}): LabsCalendarEntry => ({
  title: 'ISM Manufacturing',
  timestamp: 1_519_916_400,
  currency: 'USD',
  impact: 3,
  forecast: '59.5',
  previous: '59.1',
  ...o,
});
const signal = (id: number, end: number, inst = 'EUR_USD'): AutochartistSignal => ({
  id,
  instrument: inst,
  type: 'chartpattern',
  meta: { direction: 1, probability: 70, pattern: 'Triangle', interval: 60, completed: 1 },
  data: {
    patternendtime: end,
    prediction: { timefrom: end, timeto: end + 3600, pricelow: 1.1, pricehigh: 1.2 },
  },
});

/** A sighting: a calendar entry (one of a few identities, maybe with its actual) or a signal (one of a few ids). */
const sighting = fc.oneof(
  fc.record({
    k: fc.constant('cal' as const),
    who: fc.integer({ min: 0, max: 3 }),
    actual: fc.option(fc.constantFrom('1.0', '2.0'), { nil: undefined }),
  }),
  fc.record({
    k: fc.constant('sig' as const),
    who: fc.integer({ min: 0, max: 3 }),
    actual: fc.constant(undefined),
  }),
);
const BASE = 1_700_000_000;
const toEntry = (who: number, actual: string | undefined): LabsCalendarEntry =>
  entry({ timestamp: BASE + who * 3600, title: `T${who}`, ...(actual !== undefined ? { actual } : {}) });

describe('labs item identity', () => {
  it('a calendar entry whose actual arrives later is a new version of the same entry; the same content again is nothing', () => {
    const id = new LabsIdentity();
    const a = id.calendar(entry(), 1000)!;
    expect(a).toMatchObject({ version: 1, knownAt: 1000 });
    expect(id.calendar(entry(), 2000)).toBeUndefined();
    const b = id.calendar(entry({ actual: '60.8' }), 3000)!;
    expect(b).toMatchObject({ key: a.key, version: 2 });
    expect(calendarItemEvent(b).update).toBe(true);
    expect(id.calendar(entry({ actual: '60.8' }), 4000)).toBeUndefined();
  });

  it('an Autochartist pattern seen again is not new', () => {
    const id = new LabsIdentity();
    expect(id.signal(signal(7, BASE), 1)).toBeDefined();
    expect(
      id.signal({ ...signal(7, BASE), meta: { ...signal(7, BASE).meta, probability: 90 } }, 2),
    ).toBeUndefined();
  });

  it('property: any sequence of sightings records each identity once per distinct content in a row, versions counting up', () => {
    fc.assert(
      fc.property(fc.array(sighting, { maxLength: 60 }), (seq) => {
        const id = new LabsIdentity();
        const items: LabsItem[] = [];
        seq.forEach((s, n) => {
          const it =
            s.k === 'cal' ? id.calendar(toEntry(s.who, s.actual), n) : id.signal(signal(s.who, BASE), n);
          if (it) items.push(it);
        });
        // Signals: one item per distinct id.
        const sigIds = new Set(seq.filter((s) => s.k === 'sig').map((s) => s.who));
        expect(items.filter((i) => i.kind === 'signals')).toHaveLength(sigIds.size);
        // Calendar: one item per change of content of each identity, versions 1..n.
        for (const who of new Set(seq.filter((s) => s.k === 'cal').map((s) => s.who))) {
          const contents = seq.filter((s) => s.k === 'cal' && s.who === who).map((s) => s.actual ?? '');
          const changes = contents.filter((c, i) => i === 0 || c !== contents[i - 1]).length;
          const mine = items.filter((i) => i.kind === 'calendar' && i.entry.title === `T${who}`);
          expect(mine.map((i) => (i.kind === 'calendar' ? i.version : 0))).toEqual(
            Array.from({ length: changes }, (_, i) => i + 1),
          );
        }
        // Remembering the recorded items (a resume) makes every sighting old.
        const again = new LabsIdentity();
        for (const i of items) again.remember(i);
        const last = new Map<number, string | undefined>();
        for (const s of seq) if (s.k === 'cal') last.set(s.who, s.actual);
        for (const [who, actual] of last) expect(again.calendar(toEntry(who, actual), 999)).toBeUndefined();
        for (const who of sigIds) expect(again.signal(signal(who, BASE), 999)).toBeUndefined();
      }),
    );
  });

  it('forget bounds memory: identities older than the cut are dropped', () => {
    const id = new LabsIdentity();
    for (let k = 0; k < 100; k++) id.signal(signal(k, BASE + k * 60), 0);
    id.forget((BASE + 50 * 60) * 1000);
    expect(id.size).toBe(50);
  });
});

describe('labs items in the catalog', () => {
  const dir = (): string => mkdtempSync(join(tmpdir(), 'fxflow-labs-'));

  it('appends per kind per month, lists, and reads back in order; a resumed writer records nothing twice', async () => {
    const root = dir();
    const w = await LabsWriter.open(root, { now: Date.UTC(2026, 1, 1) });
    const jan = Date.UTC(2026, 0, 31, 23);
    const feb = Date.UTC(2026, 1, 1, 1);
    w.append([w.identity.calendar(entry(), jan)!, w.identity.signal(signal(1, jan / 1000 - 60), jan)!]);
    w.append([w.identity.calendar(entry({ actual: '60.8' }), feb)!]);
    expect(labsFiles(root, 'calendar').map((f) => f.month)).toEqual(['2026-01', '2026-02']);
    const w2 = await LabsWriter.open(root, { now: feb });
    expect(w2.identity.calendar(entry({ actual: '60.8' }), feb + 1)).toBeUndefined();
    expect(w2.identity.signal(signal(1, 0), feb + 1)).toBeUndefined();
    const list = await listLabs(root);
    expect(list.map((l) => [l.kind, l.items, l.files, l.subjects.join()])).toEqual([
      ['calendar', 2, 2, 'USD'],
      ['signals', 1, 1, 'EUR_USD'],
    ]);
    const cal: unknown[] = [];
    for await (const b of recordedCalendar(root, { currencies: ['USD'], from: 0, to: Date.UTC(2027, 0) }))
      cal.push(...b);
    expect(cal).toMatchObject([
      { at: jan, releaseAt: 1_519_916_400_000 },
      { at: feb, actual: '60.8', update: true },
    ]);
  });

  it('a line cut short by a crash is repaired on resume (that item is fetched again); a damaged line names file and line', async () => {
    const root = dir();
    const w = await LabsWriter.open(root, { now: 0 });
    w.append([w.identity.signal(signal(1, 100), 1_000_000)!]);
    const [f] = labsFiles(root, 'signals');
    appendFileSync(f!.file, '{"kind":"signals","knownAt":2000000,"ke');
    const w2 = await LabsWriter.open(root, { now: 0 });
    expect(w2.repaired).toEqual([{ file: f!.file, bytes: 39 }]);
    expect(readFileSync(f!.file, 'utf8').split('\n')).toHaveLength(2);
    writeFileSync(f!.file, `${readFileSync(f!.file, 'utf8')}not json\n`);
    const read = async (): Promise<void> => {
      for await (const _ of readLabsItems(root, 'signals', { from: 0, to: Infinity })) void _;
    };
    await expect(read()).rejects.toThrow(`${f!.file}:2: not a JSON labs item`);
    writeFileSync(
      f!.file,
      `${JSON.stringify({ kind: 'signals', knownAt: 1, key: 'x', signal: signal(2, 1), extra: 1 })}\n`,
    );
    await expect(read()).rejects.toThrow(`${f!.file}:1 (extra): unknown field`);
  });

  it('property: a strategy never gets an item before it became known, nor an actual before its release, and gets them in time order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            dt: fc.integer({ min: 0, max: 7200_000 }),
            release: fc.integer({ min: -7200, max: 7200 }),
            actual: fc.boolean(),
            sig: fc.boolean(),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.integer({ min: 0, max: 40 * 3600_000 }),
        async (rows, fromOffset) => {
          const root = dir();
          const w = await LabsWriter.open(root, { now: 0 });
          let t = Date.UTC(2026, 0, 31);
          const written: LabsItem[] = [];
          rows.forEach((r, n) => {
            t += r.dt;
            const rel = Math.floor(t / 1000) + r.release;
            const item = r.sig
              ? w.identity.signal(signal(n, rel), t)!
              : w.identity.calendar(
                  entry({ title: `E${n}`, timestamp: rel, ...(r.actual ? { actual: '1' } : {}) }),
                  t,
                )!;
            written.push(item);
            w.append([item]);
          });
          const from = Date.UTC(2026, 0, 31) + fromOffset;
          const seen: { at: number; knownAt: number; rel: number; actual: boolean }[] = [];
          for await (const b of recordedCalendar(root, { currencies: ['USD'], from, to: Infinity }))
            for (const e of b)
              seen.push({ at: e.at, knownAt: 0, rel: e.releaseAt!, actual: e.actual !== undefined });
          for (const e of seen) if (e.actual) expect(e.at).toBeGreaterThanOrEqual(e.rel);
          for (let i = 1; i < seen.length; i++) expect(seen[i]!.at).toBeGreaterThanOrEqual(seen[i - 1]!.at);
          const sigs: number[] = [];
          for await (const b of recordedSignals(root, { instruments: ['EUR_USD'], from, to: Infinity }))
            for (const e of b) sigs.push(e.at);
          for (let i = 1; i < sigs.length; i++) expect(sigs[i]!).toBeGreaterThanOrEqual(sigs[i - 1]!);
          // Exactly the items visible from `from` on, each at max(knownAt, its own time when it could not be earlier).
          const expected = written.filter((i) => visibleAt(i) >= from);
          expect(seen.length + sigs.length).toBe(expected.length);
          for (const i of written) expect(visibleAt(i)).toBeGreaterThanOrEqual(i.knownAt);
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('recorded OANDA labs responses as format fixtures', () => {
  warnIfNoShared('labs fixtures');
  it.skipIf(!HAS_SHARED)(
    'OANDA calendar and Autochartist responses become recorded items and events',
    async () => {
      const rec = JSON.parse(
        readFileSync(join(OANDA, 'fixtures/oandapyV20/forexlabs.json'), 'utf8'),
      ) as Record<string, { response: unknown }>;
      const cal = parseCalendar(rec._v3_forexlabs_calendar!.response);
      const ac = parseAutochartist(rec._v3_forexlabs_autochartist!.response);
      const root = mkdtempSync(join(tmpdir(), 'fxflow-labs-'));
      const w = await LabsWriter.open(root, { now: 0 });
      const known = Date.UTC(2018, 2, 2);
      w.append(cal.map((e) => w.identity.calendar(e, known)!));
      w.append(ac.signals.map((s) => w.identity.signal(s, known)).filter((i) => i !== undefined));
      const events: unknown[] = [];
      for await (const b of recordedCalendar(root, { currencies: ['USD'], from: 0, to: Infinity }))
        events.push(...b);
      expect(events).toEqual([
        {
          kind: 'calendar',
          at: known,
          releaseAt: 1_519_916_400_000,
          currency: 'USD',
          title: 'ISM Manufacturing',
          impact: 3,
          actual: '60.8',
          forecast: '59.5',
          previous: '59.1',
        },
      ]);
      const sigs: ReturnType<typeof signalItemEvent>[] = [];
      const insts = [...new Set(ac.signals.map((s) => s.instrument))];
      for await (const b of recordedSignals(root, { instruments: insts, from: 0, to: Infinity }))
        sigs.push(...b);
      expect(sigs.length).toBe(new Set(ac.signals.map((s) => `${s.instrument}|${s.id}`)).size);
      for (const s of sigs) expect(s.at).toBeGreaterThanOrEqual(s.data!.patternEndAt as number);
    },
  );
});
