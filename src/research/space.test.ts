import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConstraintError, parseConstraint } from './constraint.ts';
import { buildSpace, parseDimension, SpaceError } from './space.ts';

const defaults = { fast: 10, slow: 30, sl: 0.001, units: '1000', longOnly: false };

describe('parameter spaces', () => {
  it('ranges are inclusive, in clean decimals; lists are typed by the default', () => {
    expect(parseDimension('fast=5:50:5', defaults).values).toEqual([5, 10, 15, 20, 25, 30, 35, 40, 45, 50]);
    expect(parseDimension('fast=5:52:5', defaults).values).toEqual([5, 10, 15, 20, 25, 30, 35, 40, 45, 50]);
    // 0.0005 + 3 × 0.0001 is 0.0008000000000000001 in binary; the range gives 0.0008.
    expect(parseDimension('sl=0.0005:0.001:0.0001', defaults).values).toEqual([
      0.0005, 0.0006, 0.0007, 0.0008, 0.0009, 0.001,
    ]);
    expect(parseDimension('slow=100,20,50', defaults).values).toEqual([20, 50, 100]);
    expect(parseDimension('longOnly=true,false', defaults).values).toEqual([true, false]);
    expect(parseDimension('units=1000,2000', defaults).values).toEqual(['1000', '2000']);
  });

  it('bad specs: errors that name the flag and say how to fix it', () => {
    expect(() => parseDimension('fats=1:2:1', defaults)).toThrow(
      "unknown param 'fats'; the strategy declares: fast, slow, sl, units, longOnly",
    );
    expect(() => parseDimension('fast=1:2', defaults)).toThrow('a range is from:to:step');
    expect(() => parseDimension('fast=9:2:1', defaults)).toThrow('ends (2) before it starts (9)');
    expect(() => parseDimension('fast=a,b', defaults)).toThrow("'a' is not a number");
    expect(() => parseDimension('units=1:5:1', defaults)).toThrow('a range needs a number param');
    expect(() => parseDimension('longOnly=yes', defaults)).toThrow('must be true or false');
    expect(() => parseDimension('fast=5,5', defaults)).toThrow('listed twice');
    expect(() => buildSpace(defaults, ['fast=5'], [])).toThrow(SpaceError);
  });

  it('a single value fixes the param; index ↔ digits round-trips; validPoints honours every constraint', () => {
    const s = buildSpace(
      defaults,
      ['fast=5:20:5', 'slow=10,20,30', 'units=2000'],
      ['fast < slow', 'slow - fast >= 10'],
    );
    expect(s.dims.map((d) => d.name)).toEqual(['fast', 'slow']);
    expect(s.base.units).toBe('2000');
    expect(s.size).toBe(12);
    for (let i = 0; i < s.size; i++) expect(s.index(s.digits(i))).toBe(i);
    const ok = s.validPoints().map((i) => s.swept(i));
    // fast 5: slow 20, 30 (10 fails slow − fast ≥ 10 … 10 − 5 = 5); fast 10: 20, 30; fast 15: 30 (not 20: 5); fast 20: 30.
    expect(ok).toEqual([
      { fast: 5, slow: 20 },
      { fast: 5, slow: 30 },
      { fast: 10, slow: 20 },
      { fast: 10, slow: 30 },
      { fast: 15, slow: 30 },
      { fast: 20, slow: 30 },
    ]);
  });
});

describe('constraints: a small safe expression language', () => {
  const known = ['fast', 'slow', 'sl', 'tp', 'units', 'longOnly'];
  it('arithmetic, comparisons, and/or/not, precedence and parentheses', () => {
    const env = { fast: 10, slow: 30, sl: 0.001, tp: 0.003, units: '1000', longOnly: false };
    const t = (src: string): boolean => parseConstraint(src, known).test(env);
    expect(t('fast < slow')).toBe(true);
    expect(t('slow - fast * 2 == 10')).toBe(true); // * before -
    expect(t('(slow - fast) * 2 == 40')).toBe(true);
    expect(t('tp >= 3 * sl')).toBe(true);
    expect(t('fast > slow or tp / sl > 2.5')).toBe(true);
    expect(t('fast > slow || not longOnly && units == "1000"')).toBe(true); // and binds tighter than or
    expect(t('!(fast < slow)')).toBe(false);
    expect(t('-fast < -slow')).toBe(false);
    expect(t('slow % fast == 0')).toBe(true);
    expect(t("units != '2000' and longOnly == false")).toBe(true);
  });

  it('agrees with JavaScript on random arithmetic comparisons', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -50, max: 50 }),
        fc.integer({ min: -50, max: 50 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom('<', '<=', '>', '>=', '==', '!='),
        (a, b, k, op) => {
          const c = parseConstraint(`fast * ${k} - slow ${op} slow / ${k} + 1`, known);
          const l = a * k - b,
            r = b / k + 1;
          const js = { '<': l < r, '<=': l <= r, '>': l > r, '>=': l >= r, '==': l === r, '!=': l !== r }[op];
          expect(c.test({ fast: a, slow: b })).toBe(js);
        },
      ),
    );
  });

  it('no eval: anything outside the grammar is an error with its column', () => {
    expect(() => parseConstraint('process.exit(1)', [...known, 'process'])).toThrow(ConstraintError);
    expect(() => parseConstraint('fast < slwo', known)).toThrow("unknown name 'slwo'");
    expect(() => parseConstraint('fast < ', known)).toThrow('ends too early');
    expect(() => parseConstraint('fast < slow < 3', known)).toThrow('comparisons do not chain');
    expect(() => parseConstraint('(fast < slow', known)).toThrow("missing ')'");
    expect(() => parseConstraint('fast; slow', known)).toThrow("unexpected ';'");
    expect(() => parseConstraint('fast < slow', known)).not.toThrow();
    expect(() => parseConstraint('fast $ slow', known)).toThrow(
      "--constraint 'fast $ slow': unexpected '$' (use names, numbers, + - * / %, < <= > >= == !=, and, or, not, parentheses) (at column 6)",
    );
  });
});
