/**
 * The operator's memory tools, for an MCP client acting for a person rather than a model:
 * `memory_list` (browse the scope's records, newest first, with their review state),
 * `memory_review` (confirm, reject or reset one record) and `memory_forget` (delete records for
 * good, leaving content-free tombstones).
 *
 * They act inside the server's scope only: a record of another scope is "not found", never
 * reviewed. A new operator tool is one more `Tool.make` in {@link OperatorToolkit} and one more
 * handler in {@link make}; the server registers whatever the toolkit holds.
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { MemoryGate, MemoryQuery, MemoryRecord, MemoryStore, PromotionStore, ScopeView, TextSafety } from "@engram/core"
import { Extraction, MemoryTools } from "@engram/runtime"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

const operatorFields = {
  sourceType: MemoryRecord.SourceType,
  scope: MemoryRecord.Scope,
  deliveryPolicy: MemoryRecord.DeliveryPolicy,
  expiresAt: Schema.optional(Schema.DateTimeUtc),
  invalidatedAt: Schema.optional(Schema.DateTimeUtc)
}

/**
 * One record as an operator tool answers it — through the gate (`MemoryGate`), like every memory
 * tool, since an MCP client hands tool results to its model: a shown record with everything
 * `memory_recall` shows plus its tags, provenance and delivery; a record held for review named
 * without its content or tags; a rejected record named as `withheld`. An operator reads a held
 * record's text in the console or with `engram memory show`, never through a model.
 *
 * @since 0.1.0
 * @category schemas
 */
export const OperatorView = Schema.Union(
  Schema.Struct({ ...MemoryTools.ShownMemory.fields, tags: Schema.Array(Schema.String), ...operatorFields }),
  Schema.Struct({ ...MemoryTools.HeldMemory.fields, ...operatorFields }),
  Schema.Struct({
    id: MemoryRecord.MemoryId,
    kind: MemoryRecord.MemoryKind,
    reviewState: MemoryRecord.ReviewState,
    createdAt: Schema.DateTimeUtc,
    withheld: Schema.Literal("rejected", "superseded", "expired"),
    ...operatorFields
  })
).annotations({ identifier: "OperatorMemoryView" })
/** @since 0.1.0 @category schemas */
export type OperatorView = typeof OperatorView.Type

/**
 * A record as `memory_list` and `memory_review` show it (see {@link OperatorView}); superseded and
 * expired records are shown as history.
 *
 * @since 0.1.0
 * @category constructors
 */
export const operatorViewOf = (record: MemoryRecord.MemoryRecord, now?: DateTime.Utc): OperatorView => {
  const provenance = {
    sourceType: record.sourceType,
    scope: record.scope,
    deliveryPolicy: record.deliveryPolicy,
    ...(record.expiresAt !== undefined ? { expiresAt: record.expiresAt } : {}),
    ...(record.invalidatedAt !== undefined ? { invalidatedAt: record.invalidatedAt } : {})
  }
  const view = MemoryTools.viewOf(record, { now, purpose: "history" })
  if (view === undefined) {
    return {
      id: record.id,
      kind: record.kind,
      reviewState: record.reviewState,
      createdAt: record.createdAt,
      withheld: "rejected",
      ...provenance
    }
  }
  return "held" in view
    ? { ...view, ...provenance }
    : { ...view, tags: record.tags.map((tag) => TextSafety.safeLine(tag)), ...provenance }
}

/**
 * The most records one `memory_list` call returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LIST = 200

/**
 * The `memory_list` tool: a page of the scope's records, newest first.
 *
 * @since 0.1.0
 * @category tools
 */
export const MemoryList = Tool.make("memory_list", {
  description: "List saved memories of this scope, newest first, with their review state. Pass nextCursor back as " +
    "cursor for the next page.",
  parameters: {
    kinds: Schema.optional(Schema.Array(MemoryRecord.MemoryKind)).annotations({ description: "Only these kinds." }),
    reviewStates: Schema.optional(Schema.Array(MemoryRecord.ReviewState)).annotations({
      description: "Only these review states, e.g. [\"pending\"] for what waits for review."
    }),
    includeSuperseded: Schema.optional(Schema.Boolean).annotations({
      description: "Also list superseded and otherwise invalidated memories."
    }),
    limit: Schema.optional(Schema.Int.pipe(Schema.between(1, MAX_LIST))).annotations({
      description: `At most this many (1-${MAX_LIST}, default 50).`
    }),
    cursor: Schema.optional(Schema.String).annotations({ description: "nextCursor of the previous page." })
  },
  success: Schema.Struct({
    memories: Schema.Array(OperatorView),
    nextCursor: Schema.optional(Schema.String)
  }),
  failure: MemoryTools.MemoryToolError,
  failureMode: "return"
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false)

/**
 * The `memory_review` tool: sets one record's review state. A record held for review (the
 * poisoning screen flagged it, `MemoryGate.isHeld`) is never confirmed through it — a tool call is a
 * model's, and a model does not release what the screen held (decision 0134); rejecting it is allowed.
 *
 * @since 0.1.0
 * @category tools
 */
export const MemoryReview = Tool.make("memory_review", {
  description: "Set the review state of one memory of this scope: confirmed (an operator vouches for it), rejected " +
    "(never delivered again) or pending. A memory held for review cannot be confirmed here.",
  parameters: {
    id: MemoryRecord.MemoryId.annotations({ description: "The memory's id." }),
    state: MemoryRecord.ReviewState.annotations({ description: "confirmed, rejected or pending." })
  },
  success: Schema.Struct({ status: Schema.Literal("reviewed"), memory: OperatorView }),
  failure: MemoryTools.MemoryToolError,
  failureMode: "return"
}).annotate(Tool.Idempotent, true)

/**
 * The `memory_forget` tool: deletes memories of this scope for good — record, search index and
 * promotion rows — leaving a tombstone (id, when, by whom; no content) per record.
 *
 * @since 0.1.0
 * @category tools
 */
export const MemoryForget = Tool.make("memory_forget", {
  description: "Delete memories of this scope for good: the record, its search index entries and its placements. " +
    "Irreversible; a tombstone keeps only the id, when and by whom. Ask the person before calling this.",
  parameters: {
    ids: Schema.Array(MemoryRecord.MemoryId).pipe(Schema.minItems(1), Schema.maxItems(100)).annotations({
      description: "The ids of the memories to forget (1-100)."
    })
  },
  success: Schema.Struct({ status: Schema.Literal("forgotten"), forgotten: Schema.Array(MemoryRecord.MemoryId) }),
  failure: MemoryTools.MemoryToolError,
  failureMode: "return"
}).annotate(Tool.Destructive, true).annotate(Tool.Idempotent, true)

/**
 * The operator toolkit: `memory_list`, `memory_review` and `memory_forget`.
 *
 * @since 0.1.0
 * @category tools
 */
export const OperatorToolkit = Toolkit.make(MemoryList, MemoryReview, MemoryForget)

/**
 * Where the operator tools act.
 *
 * @since 0.1.0
 * @category models
 */
export interface OperatorToolsConfig {
  readonly scope: MemoryRecord.Scope
  /** The agent's Background and spec, to promote an approved correction under (`Extraction.approve`). */
  readonly promote?: Pick<MemoryTools.MemoryToolsConfig, "background" | "spec"> | undefined
}

const DEFAULT_LIST = 50

/**
 * The operator tools' handlers over the ambient `MemoryStore`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: OperatorToolsConfig) =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    // Reviewing confirms and supersedes through the promotion store (forget reaches it, and the
    // telemetry, through the memory store, which took them when it was built).
    const promotions = yield* PromotionStore.PromotionStore
    // What a tool answers goes through the one scope rule (ScopeView), as over HTTP.
    const views = (records: ReadonlyArray<MemoryRecord.MemoryRecord>) =>
      Effect.provideService(ScopeView.records([config.scope], records), MemoryStore.MemoryStore, memories).pipe(
        Effect.zip(DateTime.now),
        Effect.map(([shown, now]) => shown.map((record) => operatorViewOf(record, now)))
      )
    return OperatorToolkit.of({
      memory_list: (params) =>
        memories.list({
          scopes: [config.scope],
          ...(params.kinds !== undefined ? { kinds: params.kinds } : {}),
          ...(params.reviewStates !== undefined ? { reviewStates: params.reviewStates } : {}),
          ...(params.includeSuperseded === true ? { includeSuperseded: true } : {}),
          limit: Math.min(params.limit ?? DEFAULT_LIST, MemoryQuery.MAX_LIMIT),
          ...(params.cursor !== undefined ? { cursor: params.cursor } : {})
        }).pipe(
          Effect.flatMap((page) =>
            Effect.map(views(page.records), (shown) => ({
              memories: shown,
              ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {})
            }))
          ),
          Effect.catchAll(MemoryTools.toToolError("memory_list")),
          Effect.withSpan("mcp.tool.memory_list", { attributes: { scope: config.scope } })
        ),
      memory_review: (params) =>
        Effect.gen(function*() {
          const [held] = (yield* memories.get([params.id], { scopes: [config.scope] })).records
          if (held === undefined) {
            return yield* new MemoryTools.MemoryToolError({
              message: `there is no memory ${params.id} in scope ${config.scope}`
            })
          }
          // A model calls this tool: it may not release what the screen held (decision 0134). Confirming
          // a held record is an operator's act, in the console, the HTTP API or `engram memory review`.
          if (params.state === "confirmed" && MemoryGate.isHeld(held)) {
            return yield* new MemoryTools.MemoryToolError({
              message:
                `memory ${params.id} is ${MemoryGate.HELD_FOR_REVIEW}: the poisoning screen flagged it, so only ` +
                "an operator confirms it, in the console or with `engram memory review`, not through a tool call; " +
                "it may be rejected here"
            })
          }
          // The one review path: confirming a supersede proposal carries it out (the successor is answered).
          const reviewed = yield* Extraction.review(params.id, params.state, config.promote).pipe(
            Effect.provideService(PromotionStore.PromotionStore, promotions),
            Effect.provideService(MemoryStore.MemoryStore, memories)
          )
          const [memory] = yield* views([reviewed])
          return { status: "reviewed" as const, memory: memory! }
        }).pipe(
          Effect.catchAll(MemoryTools.toToolError("memory_review")),
          Effect.withSpan("mcp.tool.memory_review", { attributes: { scope: config.scope } })
        ),
      memory_forget: (params) =>
        memories.forget({ ids: params.ids, scopes: [config.scope] }, { by: "mcp:operator" }).pipe(
          Effect.flatMap(({ tombstones }) =>
            tombstones.length === 0
              ? Effect.fail(
                new MemoryTools.MemoryToolError({
                  message: `none of ${params.ids.join(", ")} is a memory in scope ${config.scope}`
                })
              )
              : Effect.succeed({ status: "forgotten" as const, forgotten: tombstones.map((t) => t.memoryId) })
          ),
          Effect.catchAll(MemoryTools.toToolError("memory_forget")),
          Effect.withSpan("mcp.tool.memory_forget", { attributes: { scope: config.scope } })
        )
    })
  })

/**
 * The operator tools' handlers as a layer. Needs a `MemoryStore`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: OperatorToolsConfig) => OperatorToolkit.toLayer(make(config))
