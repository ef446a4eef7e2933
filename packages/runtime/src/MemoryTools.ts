/**
 * The memory tools a model calls, as an `@effect/ai` toolkit: `memory_save` and `memory_recall`.
 *
 * `memory_save` takes content and signals — kind, tags, a `label` naming the thing learned, and
 * the id of a memory it `supersedes` — never an address. Its description is built per agent
 * ({@link toolkitFor}): it lists the keys the agent's routing spec declares, so the model reuses
 * one label per thing. Routing is evaluated at save time — a label folds to its canonical key, so
 * `first_name` and `name` are one address — and the save gate checks the address it gives: if a
 * live record already holds it and the call does not supersede that record, the result is a
 * conflict carrying the holder's id, label and value and the exact call that would replace it, and
 * nothing is written. A saved memory is promoted at once (its promotion row committed), so the
 * next save in the same conversation sees it. The result names the key the save was filed under
 * (never a content hash) and never whether the memory will reach the prompt: telling the model
 * would teach it to rephrase until it does.
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
 * const config = {
 *   scope: "global",
 *   background: RoutingPresets.userBackgroundSections,
 *   spec: RoutingPresets.userBackground
 * } as const
 * const turn = Effect.flatMap(MemoryTools.handled(config), (toolkit) =>
 *   LanguageModel.generateText({ prompt: "My name is Doug", toolkit }))
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import {
  type Background,
  ErrorClass,
  IdGenerator,
  MemoryGate,
  MemoryRecord,
  MemoryStore,
  PromotionStore,
  Routing,
  ScopeView,
  StatedTime
} from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Schema from "effect/Schema"
import type * as ModelScreen from "./ModelScreen.js"
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
}) {
  get errorClass(): ErrorClass.ErrorClass {
    return "InvalidInput"
  }
}

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
    description: "One durable fact in one standalone sentence, as it should be read later without this conversation.",
    // Content's checks are functions JSON Schema cannot state; without this the schema a model or
    // an MCP client is shown would drop the description with them.
    jsonSchema: { minLength: 1 }
  }),
  tags: Schema.optional(Schema.Array(MemoryRecord.Tag)).annotations({
    description: "Optional free-form tags, e.g. preference, convention, travel."
  }),
  label: Schema.optional(MemoryRecord.Label).annotations({
    description:
      "Optional short name for the thing learned — \"name\", \"time_zone\", \"coffee order\" — on one line. " +
      "Use the same label when the same thing changes."
  }),
  supersedes: Schema.optional(MemoryRecord.MemoryId).annotations({
    description: "The id of an earlier memory this one replaces (it stops being used)."
  })
}

/**
 * A successful save: the new memory's id, the id it superseded, if any, and the `key` it was filed
 * under when routing gave it a named address (a label folded to the spec's canonical key: a save
 * labelled `first_name` is filed as `name`). Deliberately nothing about where (or whether) it
 * will appear in a prompt; and never a content-derived key.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Saved = Schema.Struct({
  status: Schema.Literal("saved"),
  id: MemoryRecord.MemoryId,
  key: Schema.optional(Schema.String),
  superseded: Schema.optional(MemoryRecord.MemoryId)
}).annotations({ identifier: "MemorySaved" })

/**
 * The call that would replace a conflict's holder: the refused save's own arguments with
 * `supersedes` set to the holder's id.
 *
 * @since 0.1.0
 * @category schemas
 */
export const RetryCall = Schema.Struct({
  tool: Schema.Literal("memory_save"),
  arguments: Schema.Struct({
    kind: MemoryRecord.MemoryKind,
    content: Schema.String,
    label: Schema.optional(Schema.String),
    tags: Schema.optional(Schema.Array(Schema.String)),
    supersedes: MemoryRecord.MemoryId
  })
}).annotations({ identifier: "MemorySaveRetry" })

/**
 * A refused save: a live memory already records this (a label folding to the same key, or the
 * same content). Nothing was written. `holder` names it — id, label, the key it holds and its
 * value — so the model can see what it would replace; `retry` is the exact call that replaces it
 * (absent when the holder already records the same words). A holder the gate holds for review
 * (`MemoryGate`) is named without its value: `held` says so, and its label is shown only when the
 * label itself passes the screen.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Conflict = Schema.Struct({
  status: Schema.Literal("conflict"),
  holder: Schema.Struct({
    id: MemoryRecord.MemoryId,
    label: Schema.optional(Schema.String),
    key: Schema.optional(Schema.String),
    content: Schema.optional(Schema.String),
    held: Schema.optional(Schema.Literal(MemoryGate.HELD_FOR_REVIEW))
  }),
  retry: Schema.optional(RetryCall),
  message: Schema.String
}).annotations({ identifier: "MemorySaveConflict" })

/**
 * A restatement: a live memory already states this value in the same slot (decision 0171).
 * Nothing was written; the holder is corroborated. `holder` is its id and `key` the slot's key.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Corroborated = Schema.Struct({
  status: Schema.Literal("corroborated"),
  holder: MemoryRecord.MemoryId,
  key: Schema.optional(Schema.String),
  message: Schema.String
}).annotations({ identifier: "MemorySaveCorroborated" })

/**
 * What `memory_save` returns.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SaveResult = Schema.Union(Saved, Conflict, Corroborated)
/** @since 0.1.0 @category schemas */
export type SaveResult = typeof SaveResult.Type

/**
 * One memory as `memory_recall` shows it: its content and label made safe (`MemoryGate`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ShownMemory = Schema.Struct({
  id: MemoryRecord.MemoryId,
  kind: MemoryRecord.MemoryKind,
  label: Schema.optional(Schema.String),
  content: Schema.String,
  reviewState: MemoryRecord.ReviewState,
  createdAt: Schema.DateTimeUtc,
  supersededBy: Schema.optional(MemoryRecord.MemoryId)
}).annotations({ identifier: "MemoryView" })

/**
 * A memory the gate holds for review (`MemoryGate`: the poisoning screen flags it, no operator
 * confirmed it), as every tool result names it: that it exists, never what it says.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HeldMemory = Schema.Struct({
  id: MemoryRecord.MemoryId,
  kind: MemoryRecord.MemoryKind,
  label: Schema.optional(Schema.String),
  reviewState: MemoryRecord.ReviewState,
  createdAt: Schema.DateTimeUtc,
  held: Schema.Literal(MemoryGate.HELD_FOR_REVIEW)
}).annotations({ identifier: "HeldMemoryView" })

/**
 * One memory in a tool result: shown, or named as held for review.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MemoryView = Schema.Union(ShownMemory, HeldMemory)
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

const SAVE_DESCRIPTION = "Save one durable memory so you still know it in later conversations. Give a label when the " +
  "memory is about one nameable thing. If the result is a conflict, a memory about the same thing exists: if yours " +
  "corrects it, make the call the conflict's retry field gives (your save with supersedes set to its id); to keep " +
  "both, use a different label."

/**
 * `memory_save`'s description for an agent: the general instructions, then the keys its routing
 * spec declares, by section (titled as the agent declares it), with a word on what each holds —
 * the labels the model should reuse so one thing keeps one address. Aliases are not listed: they
 * fold to the key anyway, and listing them would invite the model to use them.
 *
 * @since 0.1.0
 * @category tools
 */
export const describeSave = (config: Pick<MemoryToolsConfig, "background" | "spec">): string => {
  const keys = config.spec.keys
  if (keys === undefined) return SAVE_DESCRIPTION
  const lines = Object.entries(keys).flatMap(([section, declared]) => {
    if (declared.length === 0) return []
    const title = config.background.sections.find((s) => s.id === section)?.title ?? section
    const names = declared.map((d) => (d.description === undefined ? d.key : `${d.key} (${d.description})`))
    return [`- ${title}: ${names.join(", ")}`]
  })
  return lines.length === 0
    ? SAVE_DESCRIPTION
    : `${SAVE_DESCRIPTION} This agent files these things under one label each; use exactly these labels for them:\n` +
      lines.join("\n")
}

/**
 * The `memory_save` tool for an agent, described by {@link describeSave}.
 *
 * @since 0.1.0
 * @category tools
 */
export const memorySaveFor = (config: Pick<MemoryToolsConfig, "background" | "spec">) =>
  Tool.make("memory_save", {
    description: describeSave(config),
    parameters: SaveParameters,
    success: SaveResult,
    failure: MemoryToolError,
    failureMode: "return"
  })

/**
 * The `memory_save` tool with the general description only (no agent's keys). Agents get
 * {@link memorySaveFor} through {@link toolkitFor}.
 *
 * @since 0.1.0
 * @category tools
 */
export const MemorySave = Tool.make("memory_save", {
  description: SAVE_DESCRIPTION,
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
  description: "Search saved memories by keywords. Returns the matching memories with their ids and labels; a " +
    "memory held for review is named without its content.",
  parameters: RecallParameters,
  success: Schema.Struct({ memories: Schema.Array(MemoryView) }),
  failure: MemoryToolError,
  failureMode: "return"
})

/**
 * The memory toolkit: `memory_save` and `memory_recall`, with the general descriptions. Its
 * handlers ({@link layer}) serve {@link toolkitFor}'s toolkits too: the tools differ only in
 * their descriptions.
 *
 * @since 0.1.0
 * @category tools
 */
export const MemoryToolkit = Toolkit.make(MemorySave, MemoryRecall)

/**
 * The memory toolkit as one agent's model sees it: `memory_save` described by
 * {@link describeSave} (the agent's declared keys), and `memory_recall`.
 *
 * @since 0.1.0
 * @category tools
 */
export const toolkitFor = (config: Pick<MemoryToolsConfig, "background" | "spec">) =>
  Toolkit.make(memorySaveFor(config), MemoryRecall)

/**
 * How an agent's memory tools behave: the scope they read and write, the agent's declared
 * Background and routing spec (for the save gate and promotion), the provenance of what the
 * model saves (default `conversation`: agent-derived, pending review), tags stamped on every
 * save (`provenanceTags`, e.g. `subagent:researcher` for a subagent's writes), how many
 * memories `memory_recall` returns at most (default 10), and the second poisoning screen
 * (`modelScreen`, off by default: `ModelScreen.make`), which may flag a save, never confirm it.
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
  readonly modelScreen?: ModelScreen.Service | undefined
  /**
   * When what this toolkit saves starts to hold (`validFrom`, decision 0173): extraction passes
   * the start the candidate states, else the time of the turn it rests on. With neither this nor
   * `validTo`, a save takes the world time its content states, read against the clock (a model's
   * save, decision 0178): a start or end it names, else none.
   */
  readonly validFrom?: DateTime.Utc | undefined
  /** When what this toolkit saves stops holding (`validTo`, decision 0178): the end a candidate states. */
  readonly validTo?: DateTime.Utc | undefined
  /**
   * The session this toolkit's saves come from: a restatement it recognises names it on the
   * holder's corroboration (decision 0174). Absent, the session the call runs in
   * ({@link currentSession}, set by the native loop), or none.
   */
  readonly sessionId?: string | undefined
}

/**
 * The session the running tool call belongs to (decision 0174), for a toolkit built without a
 * `sessionId` (the native loop builds its toolkit once per agent): the loop sets it around each
 * call, and a restatement `memory_save` recognises names it on its holder's corroboration.
 *
 * @since 0.1.0
 * @category sessions
 */
export const currentSession: FiberRef.FiberRef<string | undefined> = FiberRef.unsafeMake<string | undefined>(
  undefined
)

/**
 * The default number of memories `memory_recall` returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TOOL_RECALL_LIMIT = 10

/**
 * A record as a tool result shows it, through the gate (`MemoryGate.admit`, its content with its
 * line breaks kept): shown, named as held for review, or `undefined` when the gate withholds it
 * (rejected; superseded or expired unless `purpose` is `history`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const viewOf = (
  record: MemoryRecord.MemoryRecord,
  options: Pick<MemoryGate.AdmitOptions, "now" | "purpose"> = {}
): MemoryView | undefined => {
  const admitted = MemoryGate.admit(record, { ...options, form: "block" })
  if (admitted._tag === "Withheld") return undefined
  // Both answers open with the same keys, in the order the tool's bytes show them.
  const head = {
    id: record.id,
    kind: record.kind,
    ...(admitted.label !== undefined ? { label: admitted.label } : {})
  }
  const tail = { reviewState: record.reviewState, createdAt: record.createdAt }
  return admitted._tag === "Held"
    ? { ...head, ...tail, held: MemoryGate.HELD_FOR_REVIEW }
    : {
      ...head,
      content: admitted.content,
      ...tail,
      ...(record.supersededBy !== undefined ? { supersededBy: record.supersededBy } : {})
    }
}

const conflictOf = (
  holder: MemoryRecord.MemoryRecord,
  key: string,
  params: {
    readonly kind: MemoryRecord.MemoryKind
    readonly content: string
    readonly label?: string | undefined
    readonly tags?: ReadonlyArray<string> | undefined
  }
): typeof Conflict.Type => {
  const named = !Routing.isContentKey(key)
  // The holder through the gate: its value made safe, or — held for review — not shown at all.
  const admitted = MemoryGate.admit(holder)
  const shown = admitted._tag === "Shown" ? admitted : undefined
  const label = admitted._tag === "Withheld" ? undefined : admitted.label
  const holderView = {
    id: holder.id,
    ...(label !== undefined ? { label } : {}),
    ...(named ? { key } : {}),
    ...(shown !== undefined ? { content: shown.content } : { held: MemoryGate.HELD_FOR_REVIEW })
  }
  if (!named) {
    return {
      status: "conflict",
      holder: holderView,
      message: `memory ${holder.id} already records the same content${
        shown === undefined ? ` (${MemoryGate.HELD_FOR_REVIEW})` : ""
      }; nothing was saved.`
    }
  }
  const retry = {
    tool: "memory_save" as const,
    arguments: {
      kind: params.kind,
      content: params.content,
      ...(params.label !== undefined ? { label: params.label } : {}),
      ...(params.tags !== undefined ? { tags: params.tags } : {}),
      supersedes: holder.id
    }
  }
  return {
    status: "conflict",
    holder: holderView,
    retry,
    message:
      `memory ${holder.id} already records ${JSON.stringify(key)}: ${
        shown !== undefined ? JSON.stringify(shown.content) : `(${MemoryGate.HELD_FOR_REVIEW})`
      }. ` +
      `Nothing was saved. If your memory corrects or updates it, call memory_save again with ` +
      `${JSON.stringify(retry.arguments)}; to keep both, use a different label.`
  }
}

/**
 * A store or runtime failure as the one sentence a tool answers the model with, by its class (see
 * `ErrorClass`): the error's own message for a request the model can fix (invalid input, not
 * found, conflict); for a store that failed underneath or a broken configuration, which the
 * model cannot fix, a fixed sentence, and the real message is logged. A `MemoryToolError` passes
 * through. `tool` names the tool in the log line.
 *
 * @since 0.1.0
 * @category errors
 */
export const toToolError =
  (tool: string) => (error: ErrorClass.Classifiable): Effect.Effect<never, MemoryToolError> => {
    if (error instanceof MemoryToolError) return Effect.fail(error)
    const refuse = (logged: string, message: string) =>
      Effect.zipRight(
        Effect.logError(`${tool} failed: ${logged}`).pipe(Effect.annotateLogs({ problem: error.message })),
        Effect.fail(new MemoryToolError({ message }))
      )
    const errorClass = ErrorClass.classify(error)
    switch (errorClass) {
      case "Unavailable":
        return refuse("the memory store failed", "the memory store is unavailable right now; nothing was changed")
      case "StorageFull":
        return refuse("the memory store is full", "the memory store is full; nothing was saved")
      case "Misconfigured":
        return refuse(
          "the memory configuration is broken",
          "this memory could not be saved because of a configuration error"
        )
      case "InvalidInput":
      case "NotFound":
      case "Conflict":
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
    const stores = (
      self: Effect.Effect<
        SaveResult,
        ErrorClass.Classified,
        MemoryStore.MemoryStore | PromotionStore.PromotionStore
      >
    ) =>
      self.pipe(
        Effect.provideService(MemoryStore.MemoryStore, memories),
        Effect.provideService(PromotionStore.PromotionStore, promotions)
      )
    const sourceType = config.sourceType ?? "conversation"
    const recallLimit = config.recallLimit ?? DEFAULT_TOOL_RECALL_LIMIT

    return MemoryToolkit.of({
      memory_save: (params) =>
        Effect.gen(function*() {
          // The second screen, when configured, may add its mark; it never takes one away.
          const marked = config.modelScreen === undefined ? [] : yield* config.modelScreen.classify(params)
          // World time: as given (extraction), else what the content states, read against now —
          // never the session's time, which `createdAt` already is (decision 0178).
          const worldTime = config.validFrom !== undefined || config.validTo !== undefined
            ? { validFrom: config.validFrom, validTo: config.validTo }
            : StatedTime.boundsIn(params.content, yield* DateTime.now)
          const input: MemoryRecord.MemoryWriteInput = {
            content: params.content,
            kind: params.kind,
            ...(params.label !== undefined ? { label: params.label } : {}),
            ...(params.tags !== undefined || config.provenanceTags !== undefined || marked.length > 0
              ? { tags: [...new Set([...(params.tags ?? []), ...(config.provenanceTags ?? []), ...marked])] }
              : {}),
            sourceType,
            scope: config.scope,
            ...(worldTime.validFrom !== undefined ? { validFrom: worldTime.validFrom } : {}),
            ...(worldTime.validTo !== undefined ? { validTo: worldTime.validTo } : {})
          }
          const supersedes = params.supersedes
          if (supersedes !== undefined) {
            const [original] = (yield* memories.get([supersedes], { scopes: [config.scope] })).records
            if (original === undefined) {
              return yield* new MemoryToolError({ message: `there is no memory ${supersedes} to supersede` })
            }
            if (original.supersededBy !== undefined) {
              // Name the successor only when it is a memory of this scope (ScopeView's rule).
              const [shown] = yield* ScopeView.records([config.scope], [original])
              return yield* new MemoryToolError({
                message: shown?.supersededBy !== undefined
                  ? `memory ${supersedes} was already superseded by ${shown.supersededBy}; supersede that one instead`
                  : `memory ${supersedes} was already superseded; save without supersedes instead`
              })
            }
          }
          // The record as it will be written, id included, so the gate judges exactly what is saved.
          const id = yield* (yield* IdGenerator.IdGenerator).next
          const pending = MemoryRecord.fromWriteInput(input, { id, now: yield* DateTime.now })
          const verdict = yield* SaveGate.check(pending, { ...config, supersedes })
          if (verdict._tag === "Restated") {
            // Nothing is written; the holder counts the restatement (decision 0174).
            const session = config.sessionId ?? (yield* FiberRef.get(currentSession))
            yield* memories.corroborate(verdict.holder.id, { session })
            const key = Routing.isContentKey(verdict.key) ? undefined : verdict.key
            return {
              status: "corroborated" as const,
              holder: verdict.holder.id,
              ...(key !== undefined ? { key } : {}),
              message: `memory ${verdict.holder.id} already states this value${
                key !== undefined ? ` for ${JSON.stringify(key)}` : ""
              }; nothing was saved, it is corroborated.`
            }
          }
          if (verdict._tag === "Held") {
            const holder = verdict.holders[0]!.record
            yield* Effect.logDebug("memory_save refused: the slot is held").pipe(
              Effect.annotateLogs({ holder: holder.id, key: verdict.key })
            )
            return conflictOf(holder, verdict.key, params)
          }
          const placed = verdict.evaluation.placement
          const key = placed !== null && !Routing.isContentKey(placed.key) ? placed.key : undefined
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
            ...(key !== undefined ? { key } : {}),
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
          const shown = yield* ScopeView.records([config.scope], result.hits.map((hit) => hit.record)).pipe(
            Effect.provideService(MemoryStore.MemoryStore, memories)
          )
          const now = yield* DateTime.now
          const purpose = params.includeSuperseded === true ? "history" : "deliver"
          return { memories: shown.flatMap((record) => viewOf(record, { now, purpose }) ?? []) }
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

/**
 * One agent's memory toolkit ({@link toolkitFor}) with its handlers bound to the `MemoryStore`
 * and `PromotionStore` in context: what the native loop and the MCP server offer a model.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handled = (config: MemoryToolsConfig) => Effect.provide(toolkitFor(config), layer(config))
