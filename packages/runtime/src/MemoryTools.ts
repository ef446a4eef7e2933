/**
 * The memory tools a model calls, as an `@effect/ai` toolkit: `memory_save` and `memory_recall`.
 *
 * `memory_save` takes content and signals — kind, tags, a `label` naming the thing learned, and
 * the id of a memory it `supersedes` — never an address. Routing is evaluated at save time and the
 * save gate checks the address it gives: if a live record already holds it and the call does not
 * supersede that record, the result is a conflict naming the holder and nothing is written. A
 * saved memory is promoted at once (its promotion row committed), so the next save in the same
 * conversation sees it. The result says `saved` or `conflict` and never whether the memory will
 * reach the prompt: telling the model would teach it to rephrase until it does.
 *
 * Arguments are decoded with Engram's own schemas before any handler runs: a label with a line
 * break, an unknown kind or an empty content is a tool-argument error, and nothing is written.
 *
 * `@effect/ai` runs one round of tool calls per `generateText`; the agent loop that feeds results
 * back to the model is the caller's.
 *
 * @example
 * import { LanguageModel } from "@effect/ai"
 * import { Effect } from "effect"
 * import { RoutingPresets } from "@engram/core"
 * import { MemoryTools } from "@engram/runtime"
 *
 * const turn = LanguageModel.generateText({ prompt: "My name is Doug", toolkit: MemoryTools.MemoryToolkit }).pipe(
 *   Effect.provide(MemoryTools.layer({
 *     scope: "global",
 *     background: RoutingPresets.userBackgroundSections,
 *     spec: RoutingPresets.userBackground
 *   }))
 * )
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import {
  type Background,
  IdGenerator,
  MemoryRecord,
  MemoryStore,
  type MemoryStoreError,
  MemoryWrite,
  PromotionStore,
  type Routing
} from "@engram/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Promotion from "./Promotion.js"
import * as SaveGate from "./SaveGate.js"

/**
 * What a memory tool reports back when it could not do what was asked: one sentence the model can
 * act on. Returned to the model as the tool's result, not raised.
 *
 * @since 0.1.0
 * @category errors
 */
export class MemoryToolError extends Schema.TaggedError<MemoryToolError>()("MemoryToolError", {
  message: Schema.String
}) {}

/**
 * The parameters of `memory_save`: five flat fields, no address.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SaveParameters = {
  kind: MemoryRecord.MemoryKind.annotations({
    description: "What the memory is: profile (a fact about the user: name, home, work, family), standing (a " +
      "standing instruction or preference), fact, decision, note, episode (something that happened), reference."
  }),
  content: MemoryRecord.Content.annotations({
    description: "One durable fact in one standalone sentence, as it should be read later without this conversation."
  }),
  tags: Schema.optional(Schema.Array(MemoryRecord.Tag)).annotations({
    description: "Optional free-form tags, e.g. preference, convention, travel."
  }),
  label: Schema.optional(MemoryRecord.Label).annotations({
    description: "Optional short name for the thing learned — \"name\", \"timezone\", \"coffee order\" — on one line. " +
      "Use the same label when the same thing changes."
  }),
  supersedes: Schema.optional(MemoryRecord.MemoryId).annotations({
    description: "The id of an earlier memory this one replaces (it stops being used)."
  })
}

/**
 * A successful save: the new memory's id, and the id it superseded, if any. Deliberately
 * nothing about where (or whether) it will appear in a prompt.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Saved = Schema.Struct({
  status: Schema.Literal("saved"),
  id: MemoryRecord.MemoryId,
  superseded: Schema.optional(MemoryRecord.MemoryId)
}).annotations({ identifier: "MemorySaved" })

/**
 * A refused save: a live memory already records this (same label, or same content). Nothing was
 * written. `holder` names it so the model can supersede it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Conflict = Schema.Struct({
  status: Schema.Literal("conflict"),
  holder: Schema.Struct({ id: MemoryRecord.MemoryId, label: Schema.optional(Schema.String) }),
  message: Schema.String
}).annotations({ identifier: "MemorySaveConflict" })

/**
 * What `memory_save` returns.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SaveResult = Schema.Union(Saved, Conflict)
/** @since 0.1.0 @category schemas */
export type SaveResult = typeof SaveResult.Type

/**
 * One memory as `memory_recall` shows it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MemoryView = Schema.Struct({
  id: MemoryRecord.MemoryId,
  kind: MemoryRecord.MemoryKind,
  label: Schema.optional(Schema.String),
  content: Schema.String,
  reviewState: MemoryRecord.ReviewState,
  createdAt: Schema.DateTimeUtc,
  supersededBy: Schema.optional(MemoryRecord.MemoryId)
}).annotations({ identifier: "MemoryView" })
/** @since 0.1.0 @category schemas */
export type MemoryView = typeof MemoryView.Type

/**
 * The parameters of `memory_recall`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RecallParameters = {
  query: Schema.String.pipe(Schema.minLength(1, { message: () => "query must not be empty" })).annotations({
    description: "Words to look for in saved memories."
  }),
  kinds: Schema.optional(Schema.Array(MemoryRecord.MemoryKind)).annotations({ description: "Only these kinds." }),
  includeSuperseded: Schema.optional(Schema.Boolean).annotations({
    description: "Also return memories that were superseded or expired (history)."
  })
}

/**
 * The `memory_save` tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const MemorySave = Tool.make("memory_save", {
  description: "Save one durable memory so you still know it in later conversations. Give a label when the memory " +
    "is about one nameable thing. If the result is a conflict, a memory about the same thing exists: save again " +
    "with supersedes set to its id to replace it, or use a different label to keep both.",
  parameters: SaveParameters,
  success: SaveResult,
  failure: MemoryToolError,
  failureMode: "return"
})

/**
 * The `memory_recall` tool.
 *
 * @since 0.1.0
 * @category tools
 */
export const MemoryRecall = Tool.make("memory_recall", {
  description: "Search saved memories by keywords. Returns the matching memories with their ids and labels.",
  parameters: RecallParameters,
  success: Schema.Struct({ memories: Schema.Array(MemoryView) }),
  failure: MemoryToolError,
  failureMode: "return"
})

/**
 * The memory toolkit: `memory_save` and `memory_recall`.
 *
 * @since 0.1.0
 * @category tools
 */
export const MemoryToolkit = Toolkit.make(MemorySave, MemoryRecall)

/**
 * How an agent's memory tools behave: the scope they read and write, the agent's declared
 * Background and routing spec (for the save gate and promotion), the provenance of what the
 * model saves (default `conversation`: agent-derived, pending review), tags stamped on every
 * save (`provenanceTags`, e.g. `subagent:researcher` for a subagent's writes), and how many
 * memories `memory_recall` returns at most (default 10).
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryToolsConfig {
  readonly scope: MemoryRecord.Scope
  readonly background: Background.Background
  readonly spec: Routing.MemoryRoutingSpec
  readonly sourceType?: MemoryRecord.SourceType | undefined
  readonly provenanceTags?: ReadonlyArray<string> | undefined
  readonly recallLimit?: number | undefined
}

/**
 * The default number of memories `memory_recall` returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_RECALL_LIMIT = 10

/**
 * A record as `memory_recall` shows it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const viewOf = (record: MemoryRecord.MemoryRecord): MemoryView => ({
  id: record.id,
  kind: record.kind,
  ...(record.label !== undefined ? { label: record.label } : {}),
  content: record.content,
  reviewState: record.reviewState,
  createdAt: record.createdAt,
  ...(record.supersededBy !== undefined ? { supersededBy: record.supersededBy } : {})
})

const conflictMessage = (holder: MemoryRecord.MemoryRecord): string =>
  holder.label !== undefined
    ? `memory ${holder.id} (label ${JSON.stringify(holder.label)}) already records this; nothing was saved. ` +
      `To replace it, save again with supersedes "${holder.id}"; to keep both, use a different label.`
    : `memory ${holder.id} already records the same content; nothing was saved.`

type StoreError =
  | MemoryStoreError.DuplicateMemoryId
  | MemoryStoreError.InvalidMemoryInput
  | MemoryStoreError.InvalidMemoryQuery
  | MemoryStoreError.MemoryNotFound
  | MemoryStoreError.MemoryConflict
  | MemoryStoreError.MemoryStoreFailure
  | PromotionStore.PromotionStoreFailure
  | Routing.InvalidPlacement

// Store errors become one sentence for the model; failures underneath are also logged.
const toToolError = (tool: string) => (error: StoreError | MemoryToolError): Effect.Effect<never, MemoryToolError> => {
  switch (error._tag) {
    case "MemoryToolError":
      return Effect.fail(error)
    case "MemoryStoreFailure":
    case "PromotionStoreFailure":
      return Effect.zipRight(
        Effect.logError(`${tool} failed: the memory store failed`).pipe(Effect.annotateLogs({ problem: error.message })),
        Effect.fail(new MemoryToolError({ message: "the memory store is unavailable right now; nothing was changed" }))
      )
    case "InvalidPlacement":
      return Effect.zipRight(
        Effect.logError(`${tool} failed: the routing spec is broken`).pipe(Effect.annotateLogs({ problem: error.message })),
        Effect.fail(new MemoryToolError({ message: "this memory could not be saved because of a configuration error" }))
      )
    default:
      return Effect.fail(new MemoryToolError({ message: error.message }))
  }
}

/**
 * The handlers of the memory tools for one agent, over the ambient `MemoryStore` and
 * `PromotionStore`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: MemoryToolsConfig) =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const promotions = yield* PromotionStore.PromotionStore
    const stores = (self: Effect.Effect<SaveResult, StoreError | MemoryToolError, MemoryStore.MemoryStore | PromotionStore.PromotionStore>) =>
      self.pipe(
        Effect.provideService(MemoryStore.MemoryStore, memories),
        Effect.provideService(PromotionStore.PromotionStore, promotions)
      )
    const sourceType = config.sourceType ?? "conversation"
    const recallLimit = config.recallLimit ?? DEFAULT_RECALL_LIMIT

    return MemoryToolkit.of({
      memory_save: (params) =>
        Effect.gen(function*() {
          const input: MemoryRecord.MemoryWriteInput = {
            content: params.content,
            kind: params.kind,
            ...(params.label !== undefined ? { label: params.label } : {}),
            ...(params.tags !== undefined || config.provenanceTags !== undefined
              ? { tags: [...new Set([...(params.tags ?? []), ...(config.provenanceTags ?? [])])] }
              : {}),
            sourceType,
            scope: config.scope
          }
          const supersedes = params.supersedes
          if (supersedes !== undefined) {
            const [original] = (yield* memories.get([supersedes], { scopes: [config.scope] })).records
            if (original === undefined) {
              return yield* new MemoryToolError({ message: `there is no memory ${supersedes} to supersede` })
            }
            if (original.supersededBy !== undefined) {
              return yield* new MemoryToolError({
                message: `memory ${supersedes} was already superseded by ${original.supersededBy}; supersede that one instead`
              })
            }
          }
          // The record as it will be written, id included, so the gate judges exactly what is saved.
          const id = yield* (yield* IdGenerator.IdGenerator).next
          const pending = MemoryRecord.fromWriteInput(input, { id, now: yield* MemoryWrite.now })
          const verdict = yield* SaveGate.check(pending, { ...config, supersedes })
          if (verdict._tag === "Held") {
            const holder = verdict.holders[0]!.record
            yield* Effect.logDebug("memory_save refused: the address is held").pipe(
              Effect.annotateLogs({ holder: holder.id, placementKey: verdict.evaluation.placementKey })
            )
            return {
              status: "conflict" as const,
              holder: { id: holder.id, ...(holder.label !== undefined ? { label: holder.label } : {}) },
              message: conflictMessage(holder)
            }
          }
          const written = supersedes === undefined
            ? (yield* memories.write([{ ...input, id }]))[0]!
            : (yield* memories.supersede(supersedes, { ...input, id })).successor
          // The memory is saved whatever happens next; a row that fails to commit now is
          // committed by the next promotion step.
          yield* Promotion.promoteNew([written], config).pipe(
            Effect.catchAll((error) =>
              Effect.logWarning("memory saved but not promoted yet").pipe(
                Effect.annotateLogs({ memoryId: written.id, problem: error.message })
              )
            )
          )
          return {
            status: "saved" as const,
            id: written.id,
            ...(supersedes !== undefined ? { superseded: supersedes } : {})
          }
        }).pipe(
          stores,
          Effect.catchAll(toToolError("memory_save")),
          Effect.withSpan("agent.tool.memory_save", { attributes: { scope: config.scope, spec: config.spec.key } })
        ),

      memory_recall: (params) =>
        Effect.gen(function*() {
          const lifecycle = params.includeSuperseded === true
            ? { includeSuperseded: true, reviewStates: ["confirmed", "pending"] as const }
            : { deliverable: true }
          const result = yield* memories.search(params.query, {
            scopes: [config.scope],
            ...(params.kinds !== undefined ? { kinds: params.kinds } : {}),
            ...lifecycle,
            limit: recallLimit
          })
          return { memories: result.hits.map((hit) => viewOf(hit.record)) }
        }).pipe(
          Effect.catchAll(toToolError("memory_recall")),
          Effect.withSpan("agent.tool.memory_recall", { attributes: { scope: config.scope } })
        )
    })
  })

/**
 * The memory tools' handlers as a layer, for `LanguageModel.generateText({ toolkit:
 * MemoryToolkit })`. Needs a `MemoryStore` and a `PromotionStore`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: MemoryToolsConfig) => MemoryToolkit.toLayer(make(config))
