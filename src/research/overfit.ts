/**
 * Overfitting measures for a sweep:
 *
 * - the deflated Sharpe ratio (DSR) of the best trial: Bailey, D. H. & López de Prado, M. (2014),
 *   "The Deflated Sharpe Ratio: Correcting for Selection Bias, Backtest Overfitting and
 *   Non-Normality", Journal of Portfolio Management 40(5), 94–107. The probability that the best
 *   trial's true Sharpe ratio is above the one the best of N trials of zero skill would show.
 * - the probability of backtest overfitting (PBO) by combinatorially symmetric cross-validation
 *   (CSCV): Bailey, D. H., Borwein, J., López de Prado, M. & Zhu, Q. J. (2017; SSRN 2015), "The
 *   Probability of Backtest Overfitting", Journal of Computational Finance 20(4). How often the
 *   configuration that is best in-sample ranks below the median out-of-sample.
 *
 * Sharpe ratios here are per period (not annualised): the papers' formulas are stated per period.
 */

/** Euler–Mascheroni constant. */
export const EULER_GAMMA = 0.5772156649015329;

/** Standard normal CDF Φ (erfc by a Chebyshev fit, |relative error| < 1.2e-7: Numerical Recipes 6.2). */
export function normCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.5 * z);
  const erfc =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? 1 - erfc / 2 : erfc / 2;
}

/**
 * Inverse standard normal CDF Φ⁻¹ (Acklam's rational approximation, |relative error| < 1.15e-9,
 * then one Halley step against normCdf).
 */
export function normInv(p: number): number {
  if (!(p > 0 && p < 1)) {
    if (p === 0) return -Infinity;
    if (p === 1) return Infinity;
    return NaN;
  }
  const a = [
    -3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1,
    2.506628277459239,
  ];
  const b = [
    -5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1,
    -1.328068155288572e1,
  ];
  const c = [
    -7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const lo = 0.02425;
  let x: number;
  if (p < lo) {
    const q = Math.sqrt(-2 * Math.log(p));
    x =
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  } else if (p <= 1 - lo) {
    const q = p - 0.5;
    const r = q * q;
    x =
      ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
      (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1);
  } else {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    x =
      -(((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  }
  return x;
}

/** Mean, standard deviation (n − 1), skewness and kurtosis (not excess: 3 for a normal) of a sample. */
export function moments(r: readonly number[]): { mean: number; sd: number; skew: number; kurt: number } {
  const n = r.length;
  let m = 0;
  for (const x of r) m += x;
  m /= n;
  let m2 = 0,
    m3 = 0,
    m4 = 0;
  for (const x of r) {
    const d = x - m;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  const sd = n > 1 ? Math.sqrt(m2 / (n - 1)) : 0;
  // Population moments for skew and kurtosis, as the papers use them.
  const p2 = m2 / n;
  return { mean: m, sd, skew: p2 > 0 ? m3 / n / p2 ** 1.5 : 0, kurt: p2 > 0 ? m4 / n / (p2 * p2) : 3 };
}

/** Per-period Sharpe ratio mean / sd (sd with n − 1); 0 for a flat or too short series. */
export function sharpePerPeriod(r: readonly number[]): number {
  if (r.length < 2) return 0;
  const { mean, sd } = moments(r);
  return sd > 0 ? mean / sd : 0;
}

/**
 * The expected maximum Sharpe ratio of N independent trials of zero true skill whose Sharpe ratios
 * have variance `variance` (DSR paper, eq. for SR₀):
 *   SR₀ = √V · ((1 − γ) Φ⁻¹(1 − 1/N) + γ Φ⁻¹(1 − 1/(N e)))
 */
export function expectedMaxSharpe(trials: number, variance: number): number {
  if (trials < 2 || !(variance > 0)) return 0;
  return (
    Math.sqrt(variance) *
    ((1 - EULER_GAMMA) * normInv(1 - 1 / trials) + EULER_GAMMA * normInv(1 - 1 / (trials * Math.E)))
  );
}

/**
 * The probabilistic Sharpe ratio: the probability that the true Sharpe ratio exceeds `benchmark`,
 * given an observed per-period Sharpe `sr` over `n` returns with skewness `skew` and kurtosis `kurt`:
 *   PSR = Φ( (SR − SR₀) √(n − 1) / √(1 − γ₃ SR + (γ₄ − 1)/4 · SR²) )
 */
export function probabilisticSharpe(
  sr: number,
  benchmark: number,
  n: number,
  skew: number,
  kurt: number,
): number {
  const denom = 1 - skew * sr + ((kurt - 1) / 4) * sr * sr;
  if (!(denom > 0) || n < 2) return NaN;
  return normCdf(((sr - benchmark) * Math.sqrt(n - 1)) / Math.sqrt(denom));
}

export interface DeflatedSharpe {
  /** Probability (0–1) that the best trial's true Sharpe is above SR₀. Above 0.95: unlikely to be luck. */
  readonly dsr: number;
  /** The best trial's per-period Sharpe ratio. */
  readonly sharpe: number;
  /** SR₀: the best Sharpe that N zero-skill trials would show (per period). */
  readonly expectedMaxSharpe: number;
  readonly trials: number;
  /** Variance of the trials' per-period Sharpe ratios. */
  readonly sharpeVariance: number;
  readonly skew: number;
  readonly kurtosis: number;
  /** Number of returns of the best trial. */
  readonly observations: number;
}

/**
 * The deflated Sharpe ratio of the best trial: PSR with SR₀ = expectedMaxSharpe(N, V[SRₙ]).
 * `best` is the best trial's return series; `sharpes` are every trial's per-period Sharpe ratios.
 */
export function deflatedSharpe(best: readonly number[], sharpes: readonly number[]): DeflatedSharpe {
  const sr = sharpePerPeriod(best);
  const { skew, kurt } = moments(best);
  const v = sharpes.length > 1 ? moments(sharpes).sd ** 2 : 0;
  const sr0 = expectedMaxSharpe(sharpes.length, v);
  return {
    dsr: probabilisticSharpe(sr, sr0, best.length, skew, kurt),
    sharpe: sr,
    expectedMaxSharpe: sr0,
    trials: sharpes.length,
    sharpeVariance: v,
    skew,
    kurtosis: kurt,
    observations: best.length,
  };
}

export interface Pbo {
  /** Probability of backtest overfitting: share of splits whose in-sample best is at or below the out-of-sample median. */
  readonly pbo: number;
  /** Number of blocks S and of splits C(S, S/2). */
  readonly blocks: number;
  readonly splits: number;
  /** The logits λ = ln(ω / (1 − ω)) of the in-sample best's relative out-of-sample rank ω, one per split. */
  readonly logits: readonly number[];
  /** Median of the logits (above 0: the in-sample best tends to stay above the median). */
  readonly medianLogit: number;
}

/** Per-block performance from a block's sum and sum of squares and count. */
export type BlockMetric = (sum: number, sumSq: number, n: number) => number;

/** Sharpe ratio of the rows in a set of blocks (mean / sd); 0 when flat. */
export const sharpeMetric: BlockMetric = (sum, sumSq, n) => {
  if (n < 2) return 0;
  const mean = sum / n;
  const v = (sumSq - n * mean * mean) / (n - 1);
  return v > 1e-300 ? mean / Math.sqrt(v) : 0;
};
/** Mean of the rows in a set of blocks. */
export const meanMetric: BlockMetric = (sum, _sq, n) => (n > 0 ? sum / n : 0);

/**
 * PBO by CSCV. `returns[n][t]` is trial n's return in period t (all the same length T). The T rows
 * are cut into S equal blocks (the last T mod S rows are dropped); for every choice J of S/2 blocks
 * (in-sample) and its complement J̄ (out-of-sample), the trial n* best on J is ranked on J̄ among the
 * N trials (ties count half), ω = rank / (N + 1), λ = ln(ω / (1 − ω)); PBO = share of splits with
 * λ ≤ 0. Performance is the Sharpe ratio by default (as in the paper).
 */
export function pboCscv(
  returns: readonly (readonly number[])[],
  blocks = 16,
  metric: BlockMetric = sharpeMetric,
): Pbo {
  const N = returns.length;
  if (blocks < 2 || blocks % 2 !== 0)
    throw new RangeError(`PBO needs an even number of blocks (got ${blocks})`);
  if (N < 2) return { pbo: NaN, blocks, splits: 0, logits: [], medianLogit: NaN };
  const T = Math.min(...returns.map((r) => r.length));
  const size = Math.floor(T / blocks);
  if (size < 1) return { pbo: NaN, blocks, splits: 0, logits: [], medianLogit: NaN };
  // Sums and sums of squares per (block, trial): each split then costs O(S · N).
  const sum = new Float64Array(blocks * N);
  const sq = new Float64Array(blocks * N);
  for (let n = 0; n < N; n++) {
    const r = returns[n]!;
    for (let b = 0; b < blocks; b++) {
      let s = 0,
        q = 0;
      for (let t = b * size; t < (b + 1) * size; t++) {
        const x = r[t]!;
        s += x;
        q += x * x;
      }
      sum[b * N + n] = s;
      sq[b * N + n] = q;
    }
  }
  const logits: number[] = [];
  const half = blocks / 2;
  const inSet = new Uint8Array(blocks);
  const perfIn = new Float64Array(N);
  const perfOut = new Float64Array(N);
  const visit = (start: number, chosen: number): void => {
    if (chosen === half) {
      for (let n = 0; n < N; n++) {
        let si = 0,
          qi = 0,
          so = 0,
          qo = 0;
        for (let b = 0; b < blocks; b++) {
          if (inSet[b]) {
            si += sum[b * N + n]!;
            qi += sq[b * N + n]!;
          } else {
            so += sum[b * N + n]!;
            qo += sq[b * N + n]!;
          }
        }
        perfIn[n] = metric(si, qi, half * size);
        perfOut[n] = metric(so, qo, half * size);
      }
      let best = 0;
      for (let n = 1; n < N; n++) if (perfIn[n]! > perfIn[best]!) best = n;
      let below = 0,
        equal = 0;
      for (let n = 0; n < N; n++) {
        if (n === best) continue;
        if (perfOut[n]! < perfOut[best]!) below++;
        else if (perfOut[n]! === perfOut[best]!) equal++;
      }
      const rank = 1 + below + equal / 2;
      const w = rank / (N + 1);
      logits.push(Math.log(w / (1 - w)));
      return;
    }
    for (let b = start; b <= blocks - (half - chosen); b++) {
      inSet[b] = 1;
      visit(b + 1, chosen + 1);
      inSet[b] = 0;
    }
  };
  visit(0, 0);
  const overfit = logits.filter((l) => l <= 0).length;
  const sorted = [...logits].sort((a, b) => a - b);
  const m = sorted.length >> 1;
  return {
    pbo: overfit / logits.length,
    blocks,
    splits: logits.length,
    logits,
    medianLogit: sorted.length % 2 ? sorted[m]! : (sorted[m - 1]! + sorted[m]!) / 2,
  };
}
