/**
 * Progress of a long command on stderr, so stdout stays the command's output: a bar redrawn in
 * place when stderr is a terminal, plain lines at most once a second otherwise (a log file or a
 * pipe never fills with carriage returns).
 *
 * ```
 * records [████████████░░░░░░░░░░░░] 1,200/2,500  48%  1,234/s  eta 1s
 * engram migrate: records 1,200/2,500 (48%), 1,234/s
 * ```
 *
 * @since 0.1.0
 */
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/**
 * Where progress goes: a write of raw text, and whether it is a terminal.
 *
 * @since 0.1.0
 * @category models
 */
export interface Output {
  readonly write: (text: string) => void
  readonly isTTY: boolean
}

/**
 * The process's stderr.
 *
 * @since 0.1.0
 * @category constructors
 */
export const stderr: Output = {
  write: (text) => void process.stderr.write(text),
  isTTY: process.stderr.isTTY === true
}

// Made on first use: an Intl.NumberFormat costs some 6 ms of CPU to build, and most commands
// count nothing.
let number: Intl.NumberFormat | undefined

/**
 * A whole number with thousands separators: `12,345`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatCount = (n: number): string => (number ??= new Intl.NumberFormat("en-US")).format(Math.round(n))

/**
 * A duration in seconds, short: `45s`, `3m05s`, `2h10m`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const formatDuration = (seconds: number): string => {
  const s = Math.max(0, Math.round(seconds))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`
}

/**
 * One state of a progress display: `done` of `total` items, at `rate` items per second.
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly label: string
  readonly done: number
  readonly total: number
  readonly rate: number
}

const percent = ({ done, total }: Snapshot): number => (total === 0 ? 100 : Math.floor((done / total) * 100))

/**
 * The bar line a terminal shows (no control characters): label, bar of `width` cells, counts,
 * percentage, rate and the time left.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderBar = (snapshot: Snapshot, width = 24): string => {
  const { done, label, rate, total } = snapshot
  const filled = total === 0 ? width : Math.min(width, Math.floor((done / total) * width))
  const bar = "█".repeat(filled) + "░".repeat(width - filled)
  const eta = rate > 0 && done < total ? `  eta ${formatDuration((total - done) / rate)}` : ""
  return `${label} [${bar}] ${formatCount(done)}/${formatCount(total)}  ${percent(snapshot)}%  ` +
    `${formatCount(rate)}/s${eta}`
}

/**
 * The plain line a log or pipe gets, prefixed with the command's name.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderLine = (prefix: string, snapshot: Snapshot): string =>
  `${prefix}: ${snapshot.label} ${formatCount(snapshot.done)}/${formatCount(snapshot.total)} ` +
  `(${percent(snapshot)}%), ${formatCount(snapshot.rate)}/s`

/**
 * A running progress display for one count. `update` redraws (or prints a line, throttled),
 * `finish` draws the final state and ends the line; `note` prints a line of its own.
 *
 * @since 0.1.0
 * @category models
 */
export interface Display {
  readonly update: (done: number) => Effect.Effect<void>
  readonly finish: (done: number) => Effect.Effect<void>
  readonly note: (text: string) => Effect.Effect<void>
  /** Ends an unfinished bar's line (before an error or an interruption message). */
  readonly close: Effect.Effect<void>
}

const TTY_INTERVAL_MS = 100
const LINE_INTERVAL_MS = 1_000

/**
 * Starts a display for `total` items labelled `label`; lines are prefixed with `prefix`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: { readonly output: Output; readonly prefix: string; readonly label: string; readonly total: number }
): Effect.Effect<Display> =>
  Effect.gen(function*() {
    const { label, output, prefix, total } = options
    const started = yield* Clock.currentTimeMillis
    let lastDrawn = Number.NEGATIVE_INFINITY
    let lastDone = -1
    let printedLines = 0
    let open = false
    let finished = false
    const snapshot = (done: number, now: number): Snapshot => ({
      label,
      done,
      total,
      rate: now > started ? (done * 1000) / (now - started) : 0
    })
    const draw = (done: number, force: boolean) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        if (finished) return
        if (output.isTTY) {
          if (!force && now - lastDrawn < TTY_INTERVAL_MS) return
          output.write(`\r\u001b[2K${renderBar(snapshot(done, now))}`)
          open = true
        } else {
          // The first line at once, then at most one a second; never the same count twice.
          if (done === lastDone || (!force && printedLines > 0 && now - lastDrawn < LINE_INTERVAL_MS)) return
          output.write(`${renderLine(prefix, snapshot(done, now))}\n`)
          printedLines++
        }
        lastDrawn = now
        lastDone = done
      })
    const close = Effect.sync(() => {
      if (open) output.write("\n")
      open = false
    })
    return {
      update: (done) => draw(done, false),
      finish: (done) =>
        Effect.zipRight(draw(done, true), Effect.zipRight(close, Effect.sync(() => void (finished = true)))),
      note: (text) => Effect.zipRight(close, Effect.sync(() => output.write(`${prefix}: ${text}\n`))),
      close
    }
  })
