/**
 * What every bench shares: option parsing, percentiles, tables, interleaved timing with the engine
 * order rotated, the machine's load, a JSON dump and a Mermaid chart for `docs/benchmarks.md`.
 */
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodeV8 from "node:v8"
import * as NodeVm from "node:vm"

export const option = (args: ReadonlyArray<string>, name: string): string | undefined => {
  const index = args.indexOf(name)
  return index >= 0 ? args[index + 1] : undefined
}

/** The PostgreSQL URL `--pg [url]` names (after the flag, or `ENGRAM_PG_URL`); undefined without `--pg`. */
export const pgUrl = (args: ReadonlyArray<string>): string | undefined => {
  const index = args.indexOf("--pg")
  if (index < 0) return undefined
  const next = args[index + 1]
  const url = next !== undefined && !next.startsWith("--") ? next : process.env.ENGRAM_PG_URL
  if (url === undefined || url === "") {
    throw new Error("--pg needs a postgres:// URL, after the flag or in ENGRAM_PG_URL")
  }
  return url
}

export const percentile = (samples: ReadonlyArray<number>, p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

export const fmt = (value: number, digits = 2) =>
  Number.isFinite(value)
    ? value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : "-"

export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ")
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}

export const loadAverage = () => NodeOs.loadavg().map((n) => n.toFixed(2)).join(" ")

export const machine = () => `load average ${loadAverage()} on ${NodeOs.availableParallelism()} CPUs`

/** One engine of a side-by-side run: answers a query with the ids it ranked, best first. */
export interface Engine {
  readonly name: string
  readonly search: (query: string) => Promise<ReadonlyArray<string>>
}

export interface EngineTiming {
  readonly name: string
  readonly samples: Array<number>
  readonly results: Array<ReadonlyArray<string>>
}

/**
 * Runs every query on every engine, interleaved: query i runs on the engines in an order rotated
 * by i, so no engine always goes first (cold) or last (warm). A warm-up round runs first.
 */
export const interleave = async (
  engines: ReadonlyArray<Engine>,
  queries: ReadonlyArray<string>,
  warmUp = 20
): Promise<Array<EngineTiming>> => {
  for (const query of queries.slice(0, warmUp)) for (const engine of engines) await engine.search(query)
  const timings = engines.map((engine): EngineTiming => ({ name: engine.name, samples: [], results: [] }))
  for (const [i, query] of queries.entries()) {
    for (let k = 0; k < engines.length; k++) {
      const index = (i + k) % engines.length
      const start = performance.now()
      const ids = await engines[index]!.search(query)
      timings[index]!.samples.push(performance.now() - start)
      timings[index]!.results.push(ids)
    }
  }
  return timings
}

export const megabytes = (bytes: number) => bytes / (1024 * 1024)

/** Writes `value` as JSON to `path` when given. */
export const writeJson = (path: string | undefined, value: unknown) => {
  if (path !== undefined) NodeFs.writeFileSync(path, JSON.stringify(value, null, 2) + "\n")
}

/**
 * A Mermaid bar chart (GitHub renders it in Markdown): one bar per label.
 */
export const mermaidBars = (title: string, yLabel: string, bars: ReadonlyArray<readonly [string, number]>): string => {
  const max = Math.max(...bars.map(([, v]) => v), 0)
  return [
    "```mermaid",
    "xychart-beta",
    `  title "${title}"`,
    `  x-axis [${bars.map(([label]) => `"${label}"`).join(", ")}]`,
    `  y-axis "${yLabel}" 0 --> ${Math.ceil(max * 1.15 * 10) / 10}`,
    `  bar [${bars.map(([, v]) => v.toFixed(2)).join(", ")}]`,
    "```"
  ].join("\n")
}

/** Appends `text` to `path` when given (a chart file the docs include). */
export const appendChart = (path: string | undefined, text: string) => {
  if (path !== undefined) NodeFs.appendFileSync(path, text + "\n\n")
}

/** Runs a full garbage collection (before a memory figure), exposing `gc` for this process if needed. */
export const collectGarbage = () => {
  NodeV8.setFlagsFromString("--expose-gc")
  const gc = NodeVm.runInNewContext("gc") as () => void
  gc()
}
