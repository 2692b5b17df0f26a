/** The bench's few statistics (bench/run.ts and its sections): a quantile, the median, a number shown fixed. */

export const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN
}

export const fixed = (n: number, digits = 2): string => Number.isFinite(n) ? n.toFixed(digits) : '–'

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
