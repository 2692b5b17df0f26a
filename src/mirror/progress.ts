/**
 * A mirror run's progress as one line for a terminal (DESIGN §13.1): what it reads, n of m where
 * the total is known, requests so far, the rate, and the time left at that rate.
 */
export interface ReadProgress {
  /** What is being read: `workspaces`, `team access of workspaces`, … */
  reading: string
  done?: number
  total?: number
  requests: number
  /** Requests a second, lately. */
  rate: number
}

export function progressLine (progress: ReadProgress): string {
  const parts = [`reading ${progress.reading}`]
  if (progress.done !== undefined) parts.push(progress.total === undefined ? `${progress.done}` : `${progress.done} of ${progress.total}`)
  parts.push(`${progress.requests} requests`, `${progress.rate.toFixed(1)}/s`)
  if (progress.done !== undefined && progress.total !== undefined && progress.rate > 0) {
    const left = Math.max(0, progress.total - progress.done) / progress.rate
    parts.push(`~${left >= 60 ? `${Math.ceil(left / 60)} min` : `${Math.ceil(left)} s`} left`)
  }
  return parts.join(' · ')
}
