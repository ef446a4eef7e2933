/**
 * `engram telemetry prune [--older-than <age>] [--keep-sessions <n>]`: one retention sweep of the
 * prompt snapshots and their trajectory — the same sweep `TelemetryRetention.layer` runs on
 * a schedule. A session goes whole: sessions whose newest snapshot is older than the age, and
 * every session past the newest `n`. The injection log is left alone.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as TelemetryRetention from "@engram/core/TelemetryRetention"
import * as Console from "effect/Console"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Flags from "../Flags.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

const units: Readonly<Record<string, Duration.Unit>> = {
  s: "seconds",
  m: "minutes",
  h: "hours",
  d: "days",
  w: "weeks"
}

/**
 * An age such as `30d`, `12h`, `90m`, `45s` or `2w`.
 *
 * @since 0.1.0
 * @category options
 */
export const Age = Schema.String.pipe(
  Schema.filter((text) => /^\d+[smhdw]$/.test(text) || "must be a whole number and a unit: s, m, h, d or w (e.g. 30d)"),
  Schema.transform(Schema.DurationFromSelf, {
    strict: true,
    decode: (text) =>
      Duration.decode(`${Number(text.slice(0, -1))} ${units[text.slice(-1)]!}` as Duration.DurationInput),
    encode: (duration) => `${Math.floor(Duration.toSeconds(duration))}s`
  })
)

const olderThan = Flags.optional(
  Flags.text("older-than", Age, "Remove sessions whose newest snapshot is older than this (e.g. 30d).", "age")
)
const keepSessions = Flags.optional(
  Flags.text(
    "keep-sessions",
    Flags.WholeNumber,
    "Keep only this many sessions: those with the newest snapshots.",
    "n"
  )
)

/**
 * `engram telemetry prune`
 *
 * @since 0.1.0
 * @category commands
 */
export const prune = Command.make(
  "prune",
  { olderThan, keepSessions },
  ({ keepSessions, olderThan }) =>
    Effect.gen(function*() {
      if (olderThan === undefined && keepSessions === undefined) {
        return yield* new CliFailure({
          problem: "say what to prune: --older-than <age> (e.g. 30d), --keep-sessions <n>, or both",
          exitCode: ExitCode.refused
        })
      }
      const where = yield* StoreBackend.location
      const result = yield* TelemetryRetention.sweep({ maxAge: olderThan, maxSessions: keepSessions }).pipe(
        Effect.provide(StoreBackend.layerObserved(where))
      )
      const settings = yield* Root.settings
      yield* Console.log(
        settings.json
          ? Render.json(result)
          : `removed ${result.sessions.length} session${result.sessions.length === 1 ? "" : "s"} ` +
            `(${result.snapshots} snapshots, ${result.entries} trajectory entries)` +
            (result.sessions.length > 0 ? `: ${result.sessions.join(", ")}` : "")
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription("Remove old prompt snapshots and their trajectories, whole sessions at a time.")
)

/**
 * The subcommands of `engram telemetry`, in the order help lists them.
 *
 * @since 0.1.0
 * @category commands
 */
export const subcommands = [prune] as const

/**
 * `engram telemetry …`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("telemetry").pipe(
  Command.withDescription("Manage stored prompt telemetry."),
  Command.withSubcommands(subcommands)
)
