/**
 * Subagents: a parent agent hands a task to a child that runs one turn of its own.
 *
 * What the mode table promises a subagent, and how it holds here:
 *
 * - **its own prompt**: the child's system prompt is the subagent's `prompt`, verbatim — no
 *   identity, no delegation roster, no Background of the parent;
 * - **its own thread, linked to the parent's**: the child's turns are stored in the session
 *   `<parent session>/<subagent name>`, so the parent thread names every child thread and a
 *   child thread names its parent;
 * - **no projection**: nothing is projected (mode `subagent`: no working state, no memory, no
 *   injection row);
 * - **allow-listed memory**: `memory_recall` by default (a pull, on demand); `memory_save` only when
 *   the allow-list names it;
 * - **the parent's store**: the child's memory tools read and write the parent's scope, and every
 *   save carries the tag `subagent:<name>` as provenance.
 *
 * @example
 * ```ts
 * const researcher = { name: "researcher", prompt: "You find and cite sources. Answer in one paragraph." }
 * const outcome = yield* Subagent.delegate({ parent: agent, sessionId: "s-1", subagent: researcher, task: "…" })
 * outcome.sessionId // "s-1/researcher"
 * outcome.result    // the child's turn result
 * ```
 *
 * @since 0.1.0
 */
import type { MemoryStore, PromotionStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as NativeRuntime from "./NativeRuntime.js"

/**
 * A subagent: its name (used in its thread id and its provenance tag), its own system prompt, the
 * memory tools it is allowed (default `["memory_recall"]`), its own tools, and its call limit.
 *
 * @since 0.1.0
 * @category models
 */
export interface SubagentConfig {
  readonly name: string
  readonly prompt: string
  readonly allow?: ReadonlyArray<"memory_recall" | "memory_save"> | undefined
  readonly toolkits?: ReadonlyArray<NativeRuntime.AgentToolkit> | undefined
  readonly maxCalls?: number | undefined
}

/**
 * The provenance tag of a subagent's saves.
 *
 * @since 0.1.0
 * @category constructors
 */
export const provenanceTag = (name: string): string => `subagent:${name}`

/**
 * The thread a subagent's turns are stored in: the parent's session id, a slash, its name.
 *
 * @since 0.1.0
 * @category constructors
 */
export const threadOf = (parentSessionId: string, name: string): string => `${parentSessionId}/${name}`

/**
 * Builds the child agent a subagent runs as, over the parent's memory configuration.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  parent: NativeRuntime.NativeAgent,
  subagent: SubagentConfig
): Effect.Effect<
  NativeRuntime.NativeAgent,
  NativeRuntime.BuildError,
  MemoryStore.MemoryStore | PromotionStore.PromotionStore
> =>
  NativeRuntime.make({
    prefix: [{ name: "Subagent", source: "role", fragments: [{ source: "authored", text: subagent.prompt }] }],
    memory: { ...parent.memory, provenanceTags: [provenanceTag(subagent.name)] },
    scopes: parent.scopes,
    mode: "subagent",
    memoryTools: subagent.allow ?? ["memory_recall"],
    // The parent's extraction reads the child's thread too: its memories land in the parent's scope.
    extraction: parent.extraction,
    ...(subagent.toolkits !== undefined ? { toolkits: subagent.toolkits } : {}),
    ...(subagent.maxCalls !== undefined ? { maxCalls: subagent.maxCalls } : {})
  })

/**
 * What a delegation returns: the child's thread and its turn result.
 *
 * @since 0.1.0
 * @category models
 */
export interface Delegation {
  readonly parentSessionId: string
  readonly sessionId: string
  readonly result: NativeRuntime.TurnResult
}

/**
 * Runs `task` as one turn of `subagent` under `parent`, in the subagent's own thread.
 *
 * @since 0.1.0
 * @category running
 */
export const delegate = (options: {
  readonly parent: NativeRuntime.NativeAgent
  readonly sessionId: string
  readonly subagent: SubagentConfig
  readonly task: string
}): Effect.Effect<
  Delegation,
  NativeRuntime.BuildError | NativeRuntime.TurnError,
  NativeRuntime.TurnContext | MemoryStore.MemoryStore | PromotionStore.PromotionStore
> =>
  Effect.gen(function*() {
    const child = yield* make(options.parent, options.subagent)
    const sessionId = threadOf(options.sessionId, options.subagent.name)
    const result = yield* NativeRuntime.runTurn({ agent: child, sessionId, input: options.task })
    return { parentSessionId: options.sessionId, sessionId, result }
  }).pipe(
    Effect.withSpan("agent.delegate", {
      attributes: { sessionId: options.sessionId, subagent: options.subagent.name }
    })
  )
