/** Reading Prometheus's text format in tests. */

/** One sample of Prometheus's text format: its name, labels and value. */
interface Sample { name: string, labels: Record<string, string>, value: number }

export function parseMetrics (text: string): Sample[] {
  return text.split('\n').filter((line) => line !== '' && !line.startsWith('#')).map((line) => {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (match === null) throw new Error(`not a sample: ${line}`)
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]))
    return { name: match[1]!, labels, value: Number(match[3]) }
  })
}

/** The value of the one sample with this name and (at least) these labels; 0 when there is none. */
export function sample (samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`)
  return found[0]?.value ?? 0
}
