/**
 * `engram sessions`: the sessions the store holds, newest first — each with its turns, its
 * history's messages, the model calls stored as prompt snapshots and when the last was sent. The
 * ids are what `engram inspect <session>` and `engram explain <id> --session <session>` take.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as SessionSummary from "@engram/core/SessionSummary"
import * as Console from "effect/Console"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { toCliFailure } from "../CliError.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

const encode = Schema.encodeSync(Schema.Array(SessionSummary.SessionSummary))

/**
 * The human view: one row per session, then the count and the store.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderSessions = (sessions: ReadonlyArray<SessionSummary.SessionSummary>, store: string): string => {
  if (sessions.length === 0) return `no sessions in ${store}`
  const rows = sessions.map((s) => [
    Render.escapeControls(s.sessionId),
    String(s.turns),
    String(s.messages),
    String(s.calls),
    s.lastCallAt === null ? "-" : DateTime.formatIso(s.lastCallAt)
  ])
  const header = ["session", "turns", "messages", "calls", "last call"]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => (i === 0 || i === 4 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ")
      .trimEnd()
  return [
    line(header),
    ...rows.map(line),
    `${sessions.length} session${sessions.length === 1 ? "" : "s"} in ${store}`
  ].join("\n")
}

/**
 * `engram sessions`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("sessions", {}, () =>
  Effect.gen(function*() {
    const where = yield* StoreBackend.location
    const sessions = yield* SessionSummary.list.pipe(
      Effect.provide(StoreBackend.layerObserved(where, undefined, "read"))
    )
    const settings = yield* Root.settings
    const store = StoreBackend.describeLocation(where)
    yield* Console.log(
      settings.json ? Render.json({ store, sessions: encode(sessions) }) : renderSessions(sessions, store)
    )
  }).pipe(Effect.mapError(toCliFailure))).pipe(
    Command.withDescription(
      "List the store's sessions, newest first: turns, messages, stored model calls and when the last was sent " +
        "(the ids engram inspect takes)."
    )
  )
