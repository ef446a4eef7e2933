/**
 * The body of `Agent`: what an agent sends in a mode (the incognito rule) and the one mapping of a
 * turn to its projection request.
 *
 * It imports only types from the public module.
 */
import { ContextProjection, ErrorClass } from "@engram/core"
import type { ProjectionLayout, PromptFragment } from "@engram/core"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import type { Agent, Sent, Turn, TurnPlan } from "../Agent.js"

export class IncognitoPrefixHoldsMemory extends ErrorClass.TaggedError<IncognitoPrefixHoldsMemory>()(
  "IncognitoPrefixHoldsMemory",
  { memoryIds: Schema.Array(Schema.String) },
  {
    errorClass: "Misconfigured",
    message: (self) =>
      `an incognito agent must not send memory, but its prefix holds ${self.memoryIds.join(", ")}; ` +
      `pass authoredPrefix (StablePrefix.buildAgent returns it)`
  }
) {}

/** Ids of the memory a prefix holds, each once. */
export const memoryIn = (prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData>): ReadonlyArray<string> => [
  ...new Set(
    prefix.flatMap((section) =>
      section.fragments.flatMap((fragment) => (fragment.source === "memory" ? fragment.memoryIds : []))
    )
  )
]

export const inMode = (
  agent: Agent,
  mode: ProjectionLayout.ProjectionMode
): Either.Either<Sent, IncognitoPrefixHoldsMemory> => {
  const incognito = mode === "incognito"
  // Incognito sends the Background as authored: no promoted memory reaches the model.
  const prefix = (incognito ? agent.authoredPrefix ?? agent.prefix : agent.prefix) ?? []
  const held = incognito ? memoryIn(prefix) : []
  if (held.length > 0) return Either.left(new IncognitoPrefixHoldsMemory({ memoryIds: held }))
  return Either.right({
    prefix,
    composedIds: incognito ? [] : agent.composedIds ?? [],
    // Incognito composed nothing from memory, so no overlay report describes its prefix.
    report: incognito ? undefined : agent.report,
    identity: agent.identity
  })
}

export const planTurn = (agent: Agent, turn: Turn): Either.Either<TurnPlan, IncognitoPrefixHoldsMemory> =>
  Either.map(inMode(agent, turn.mode), (sent): TurnPlan => {
    const settings = ContextProjection.mergeOverrides(agent.projection, turn.projection)
    const request: ContextProjection.ProjectionRequest = {
      sessionId: turn.sessionId,
      turn: turn.turn,
      query: turn.query,
      scopes: turn.scopes,
      mode: turn.mode,
      inPrefix: sent.composedIds,
      ...(sent.identity !== undefined ? { identity: sent.identity } : {}),
      ...(turn.workingState !== undefined ? { workingState: turn.workingState } : {}),
      ...(turn.skills !== undefined ? { skills: turn.skills } : {}),
      ...(turn.record !== undefined ? { record: turn.record } : {}),
      ...(settings !== undefined ? { settings } : {})
    }
    return { ...sent, request }
  })
