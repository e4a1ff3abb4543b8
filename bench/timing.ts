/**
 * How the decision benches (check, policy) time one call by hand: the cost of the timer itself,
 * subtracted from every sample, and the quantile they read from the sorted samples.
 */

/** The sample at quantile `q` (0..1) of `sorted` (nearest rank, rounding down); NaN when empty. */
export function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.floor(q * (sorted.length - 1)))]
}

/** Median cost of an empty `hrtime.bigint()` pair: subtracted from per-call samples. */
export function timerOverheadNs(): number {
  const n = 200_000
  const s = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint()
    const t1 = process.hrtime.bigint()
    s[i] = Number(t1 - t0)
  }
  s.sort()
  return s[n >> 1]
}
