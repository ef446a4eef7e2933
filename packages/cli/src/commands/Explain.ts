/**
 * `engram explain <memory-id> [--session S] [--turn N] [--call K] [--json]`: why a memory did or
 * did not reach the model on a session's stored calls (`Explain.explain`) — composed into the
 * prefix, delivered by a projection section, shed, withheld, declined by the overlay, excluded by
 * mode or scope, or not recalled — with the record's routing (spec, version, key source) and
 * whether it was promoted. Without `--session`, every stored call of every session: the calls that
 * reached the model by name, the others counted by verdict, and where it was delivered.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import type * as Explain from "@engram/runtime/Explain"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Flags from "../Flags.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"
import { resolveId } from "./Memory.js"

const position = (name: string, description: string) =>
  Flags.optional(Flags.text(name, Flags.WholeNumber, description, "n"))

/**
 * An explanation as text: the record, its routing, then one line per call.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderExplanation = (e: Explain.Explanation): string => {
  const lines: Array<string> = [`memory ${e.memoryId}`]
  if (e.record !== null) {
    lines.push(
      `  record: ${e.record.kind} in ${e.record.scope} · ${e.record.reviewState} · ${e.record.deliveryPolicy}` +
        (e.record.deliverableNow ? "" : " · not deliverable now")
    )
    const source = e.record.source
    if (source !== null) {
      const session = source.hashed ? `session sha256:${source.session}…` : `session ${source.session}`
      const turns = source.turns === undefined
        ? ""
        : source.turns.first === source.turns.last
        ? `, turn ${source.turns.first}`
        : `, turns ${source.turns.first}-${source.turns.last}`
      lines.push(`  from: ${e.record.sourceType} · ${session}${turns}`)
    }
    if (e.record.flagged) {
      lines.push(
        `  flagged: reads as an instruction to the agent (${e.record.flaggedFor.join(", ") || "its label"}); ` +
          "held pending, composed nowhere until an operator confirms it"
      )
    }
    if (e.record.proposesToSupersede !== null) {
      lines.push(`  proposal: would supersede ${e.record.proposesToSupersede} once an operator approves it`)
    }
    if (e.record.validity !== null) lines.push(`  valid: ${e.record.validity}`)
    if (e.record.corroboration !== null) lines.push(`  corroborated: ${e.record.corroboration.text}`)
  } else if (e.tombstone !== null) {
    lines.push(`  forgotten at ${e.tombstone.forgottenAt} by ${e.tombstone.forgottenBy}`)
  } else {
    lines.push("  record: not in the store")
  }
  if (e.routing.length === 0) lines.push("  routing: no promotion row (never routed)")
  for (const r of e.routing) {
    lines.push(
      `  routing: spec ${r.specKey}@${r.specVersion} · ` +
        (r.promoted
          ? `promoted to ${r.section}/${r.key} (${r.placementKey}, key from ${r.keySource ?? "?"}, tier ${
            r.tier ?? "?"
          })`
          : "not promoted (the spec placed it nowhere: recall only)")
    )
  }
  // With a session every call is listed; across all sessions, the calls that reached the model
  // and a count of the others by verdict (`--session` lists them).
  const listed = e.sessionId === null ? e.calls.filter((c) => c.reached) : e.calls
  for (const c of listed) {
    lines.push(
      `  ${c.sessionId} · turn ${c.turn}, call ${c.call} (${c.mode}): ${
        c.reached ? "REACHED" : "not reached"
      } — ${c.verdict}: ${c.reason}` +
        (c.injectionLogged ? " [injection log]" : "")
    )
  }
  if (e.sessionId === null) {
    const others = e.calls.filter((c) => !c.reached)
    const counts = new Map<string, number>()
    for (const c of others) counts.set(c.verdict, (counts.get(c.verdict) ?? 0) + 1)
    if (others.length > 0) {
      lines.push(
        `  not reached in ${others.length}${listed.length > 0 ? " other" : ""} stored call(s): ` +
          [...counts].map(([verdict, n]) => `${verdict} ${n}`).join(", ") + " (--session S lists them)"
      )
    }
    lines.push(
      e.sessions.length === 0
        ? e.calls.length === 0
          ? "  delivered in: no stored call (no session's snapshots or injection log name it)"
          : "  delivered in: no stored call"
        : `  delivered in: ${e.sessions.map((s) => `${s.sessionId} (turns ${s.turns.join(", ")})`).join("; ")}`
    )
  }
  return lines.join("\n")
}

/**
 * `engram explain`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "explain",
  {
    memoryId: Flags.argument(
      Flags.text("memory-id", Schema.String, "The memory to explain (an unambiguous start of its id is enough).")
    ),
    session: Flags.optional(
      Flags.text(
        "session",
        Schema.NonEmptyString,
        "Only this session's stored calls, each listed (default: every session's).",
        "id"
      )
    ),
    turn: position("turn", "Only this turn (with --session)."),
    call: position("call", "Only this call of each turn (with --session).")
  },
  ({ call, memoryId, session, turn }) =>
    Effect.gen(function*() {
      if (session === undefined && (turn !== undefined || call !== undefined)) {
        return yield* new CliFailure({ problem: "--turn and --call need --session", exitCode: ExitCode.refused })
      }
      const where = yield* StoreBackend.location
      const { explain, isUnknown } = yield* Effect.promise(() => import("@engram/runtime/Explain"))
      // An unambiguous start of the id is enough, as for the memory commands.
      const explanation = yield* Effect.flatMap(
        resolveId(memoryId),
        (fullId) => explain({ memoryId: fullId, sessionId: session, turn, call })
      ).pipe(Effect.provide(StoreBackend.layerObserved(where, undefined, "read")))
      if (isUnknown(explanation)) {
        return yield* new CliFailure({
          problem:
            `nothing is known of memory ${memoryId}: no record, tombstone, promotion row or stored call names it`,
          exitCode: ExitCode.refused
        })
      }
      if (session !== undefined && explanation.calls.length === 0) {
        return yield* new CliFailure({
          problem: `no stored prompt snapshot matches session ${session}` +
            `${turn === undefined ? "" : `, turn ${turn}`}${call === undefined ? "" : `, call ${call}`}`,
          exitCode: ExitCode.refused
        })
      }
      const settings = yield* Root.settings
      yield* Console.log(settings.json ? Render.json(explanation) : renderExplanation(explanation))
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("Explain why a memory did or did not reach the model on stored calls."))
