/**
 * `engram inspect <session> [--turn N] [--call K] [--json]`: what the model saw on stored calls,
 * rebuilt from the session's trajectory (`Inspect.inspectSession`) and printed the way the demo
 * prints a call — each fragment with its source and memory ids, then the projection's budget
 * table, then the memories it carried with their lifecycle and world time as stored now. A call
 * whose rebuild does not hash to what was recorded when it was sent is flagged.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import type * as Demo from "@engram/harness/Demo"
import type * as Inspect from "@engram/runtime/Inspect"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Flags from "../Flags.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

const position = (name: string, description: string) =>
  Flags.optional(Flags.text(name, Flags.WholeNumber, description, "n"))

/** One memory a call carried: its id, its lifecycle now, and when it holds (world time, decision 0175). */
const memoryLine = (m: Inspect.InspectedMemory): string =>
  `  ${m.id}  ${m.state}${m.supersededBy === null ? "" : ` by ${m.supersededBy}`} · valid ${m.validity ?? "always"}`

/**
 * One call as text: header, tools, fragments, budget (the fragments and budget drawn by the demo's
 * renderers, passed in: the command loads them with the call).
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderCall = (
  call: Inspect.InspectedCall,
  render: Pick<typeof Demo, "renderRequest" | "renderBudget">,
  memories: ReadonlyArray<Inspect.InspectedMemory> = []
): string => {
  const s = call.snapshot
  const rule = (title: string) => `── ${title} ${"─".repeat(Math.max(3, 76 - title.length))}`
  return [
    rule(
      `session ${s.sessionId}, turn ${s.turn}, call ${s.call} (${s.mode}${
        s.model === null ? "" : `, model ${s.model}`
      })`
    ),
    `  sent ${s.at.toJSON()} · ${s.request.chars} chars in ${s.request.messages} messages · ` +
    (call.verified
      ? "rebuilt byte for byte"
      : call.redacted.length > 0
      ? `redacted: the text of forgotten ${call.redacted.join(", ")} was removed`
      : "WARNING: the rebuild differs from what was recorded"),
    `  tools offered: ${s.tools.join(", ") || "none"}`,
    ...(s.strippedFrames.length > 0
      ? [`  stripped legacy frames: ${s.strippedFrames.map((f) => `#${f.seq}`).join(", ")}`]
      : []),
    ...(s.usage === null ? [] : [`  usage: ${s.usage.inputTokens ?? "?"} in, ${s.usage.outputTokens ?? "?"} out`]),
    ...render.renderRequest(call.request),
    rule("Projection budget"),
    ...render.renderBudget(call.projection),
    ...(memories.length === 0 ? [] : [rule("Memories carried, as stored now"), ...memories.map(memoryLine)])
  ].join("\n")
}

/**
 * `engram inspect`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "inspect",
  {
    session: Flags.argument(Flags.text("session", Schema.String, "The session whose calls to show.")),
    turn: position("turn", "Only this turn."),
    call: position("call", "Only this call of each turn (0 is the first).")
  },
  ({ call, session, turn }) =>
    Effect.gen(function*() {
      const where = yield* StoreBackend.location
      const [Inspect, Demo] = yield* Effect.promise(() =>
        Promise.all([import("@engram/runtime/Inspect"), import("@engram/harness/Demo")])
      )
      const { calls, memories } = yield* Effect.gen(function*() {
        const calls = yield* Inspect.inspectSession(session, { turn, call })
        return { calls, memories: yield* Effect.forEach(calls, Inspect.memoriesOf) }
      }).pipe(Effect.provide(StoreBackend.layerObserved(where, undefined, "read")))
      if (calls.length === 0) {
        return yield* new CliFailure({
          problem: `no stored prompt snapshot matches session ${session}` +
            `${turn === undefined ? "" : `, turn ${turn}`}${call === undefined ? "" : `, call ${call}`}`,
          exitCode: ExitCode.refused
        })
      }
      const settings = yield* Root.settings
      yield* Console.log(
        settings.json
          ? Render.json(calls.map((c, i) => ({
            turn: c.snapshot.turn,
            call: c.snapshot.call,
            verified: c.verified,
            redacted: c.redacted,
            snapshot: c.snapshot,
            fragments: c.request.fragments,
            budget: c.projection.budget,
            sections: c.projection.sections,
            memories: memories[i]
          })))
          : calls.map((c, i) => renderCall(c, Demo, memories[i])).join("\n\n")
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("Show what the model saw on stored calls, rebuilt from the trajectory."))
