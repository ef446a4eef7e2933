/**
 * The engine of `engram demo`: two sessions of a companion agent with a scripted model, over
 * whatever stores are in context (the command runs it on an embedded SQLite file).
 *
 * 1. **Session 1** — the operator says "Hi, I'm Doug". The model calls `memory_save` (kind
 *    `profile`, label `name`); the save is promoted at once under the `user-background` spec into
 *    the `about_user` section, whose tier (`auto`) composes memories still pending review. When
 *    the session ends, a one-line summary of it is stored for later sessions' digest.
 * 2. **Session 2** — the agent is built again, so its stable prefix now holds the promoted memory.
 *    The operator asks "who am I?"; the model answers from its prompt. The report keeps the
 *    model-visible request of that call, fragment by fragment with sources and memory ids, and the
 *    projection's budget summary.
 *
 * No network: the model is {@link ScriptedModel}, and it only reads what it was sent. Every model
 * call is also stored as a prompt snapshot in the telemetry store (`PromptObserver.layerTelemetry`),
 * so the demo's store can be inspected afterwards (`engram inspect demo-2`).
 *
 * @since 0.1.0
 */
import {
  ContextProjection,
  IdGenerator,
  type MemoryRecord,
  MemoryStore,
  type MemoryStoreError,
  type ProjectionLayout,
  PromotionStore,
  RoutingPresets,
  RoutingSpecs,
  SessionStore,
  type TelemetryStore
} from "@engram/core"
import { type ModelRequest, NativeRuntime, PromptObserver, StablePrefix } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The demo agent's configuration: a persona, tool guidance, and the user-background vocabulary
 * routed by the `user-background` spec in scope `global`.
 *
 * @since 0.1.0
 * @category constants
 */
export const agentConfig: StablePrefix.AgentConfigInput = {
  name: "engram-demo",
  persona: "You are a friendly companion. You remember what people tell you about themselves.",
  toolGuidance: [{
    tool: "memory_save",
    guidance: "When the user tells you something durable about themselves, save it with a short label."
  }],
  background: { sections: [...RoutingPresets.userBackgroundSections.sections] },
  spec: RoutingPresets.userBackground.key,
  scope: "global"
}

/**
 * The operator inputs of the two sessions.
 *
 * @since 0.1.0
 * @category constants
 */
export const inputs = { first: "Hi, I'm Doug", second: "who am I?" } as const

/**
 * The session ids of the two sessions.
 *
 * @since 0.1.0
 * @category constants
 */
export const sessions = { first: "demo-1", second: "demo-2" } as const

/**
 * The demo's model. Told a name, it saves it; after a tool round it acknowledges; asked who the
 * user is, it answers from the `name` entry of its system prompt — or says it does not know.
 *
 * @since 0.1.0
 * @category models
 */
export const script: ScriptedModel.Script = (request) => {
  const input = ScriptedModel.lastUserText(request)
  const results = ScriptedModel.pendingToolResults(request)
  if (results.length > 0) {
    const saved = results.some((result) => !result.isFailure)
    return [ScriptedModel.text(saved ? "Nice to meet you! I'll remember that." : "Sorry, I could not save that.")]
  }
  const name = /\bI'?m ([\p{L}'-]+)/u.exec(input)?.[1]
  if (name !== undefined && request.tools.includes("memory_save")) {
    const content = `The user's name is ${name}.`
    return [ScriptedModel.toolCall("memory_save", { kind: "profile", content, label: "name" })]
  }
  if (/who am i/i.test(input)) {
    const remembered = /\*\*name\*\*: (.+)/.exec(ScriptedModel.systemText(request))?.[1]
    return [ScriptedModel.text(remembered !== undefined ? `From what I remember: ${remembered}` : "I don't know yet.")]
  }
  return [ScriptedModel.text("Tell me something about yourself.")]
}

/**
 * One session of the demo: its id, the operator input, how the turn ended, and every model call's
 * snapshot.
 *
 * @since 0.1.0
 * @category models
 */
export interface DemoSession {
  readonly sessionId: string
  readonly input: string
  readonly result: NativeRuntime.TurnResult
  readonly snapshots: ReadonlyArray<PromptObserver.ObservedCall>
  readonly messages: ReadonlyArray<SessionStore.SessionMessage>
}

/**
 * What the demo did: both sessions, the memory session 1 saved and its promotion row, the
 * session summary, and the prefix session 2 was built with.
 *
 * @since 0.1.0
 * @category models
 */
export interface DemoReport {
  readonly first: DemoSession
  readonly saved: MemoryRecord.MemoryRecord | undefined
  readonly promotion: PromotionStore.PromotionRow | undefined
  readonly summary: MemoryRecord.MemoryRecord
  readonly second: DemoSession
  readonly prefix: StablePrefix.BuiltAgent
}

/**
 * The demo failed: a store, the prefix build or a turn failed.
 *
 * @since 0.1.0
 * @category errors
 */
export type DemoError =
  | NativeRuntime.TurnError
  | NativeRuntime.BuildError
  | StablePrefix.InvalidAgentConfig
  | StablePrefix.SectionOrderError
  | RoutingSpecs.RoutingSpecNotFound
  | PromotionStore.PromotionStoreFailure
  | MemoryStoreError.MemoryStoreFailure
  | MemoryStoreError.DuplicateMemoryId
  | MemoryStoreError.InvalidMemoryInput

const session = (agent: NativeRuntime.NativeAgent, sessionId: string, input: string) =>
  Effect.gen(function*() {
    const before = (yield* PromptObserver.captured).length
    const result = yield* NativeRuntime.runTurn({ agent, sessionId, input })
    const snapshots = (yield* PromptObserver.captured).slice(before)
    const stored = yield* Effect.flatMap(SessionStore.SessionStore, (store) => store.load(sessionId))
    return { sessionId, input, result, snapshots, messages: stored.messages } satisfies DemoSession
  })

/**
 * Runs the demo over the stores in context. Ids come from `IdGenerator.sequential("mem")`, so a
 * demo on an empty store always saves `mem-000001`; run it on a fresh store.
 *
 * @since 0.1.0
 * @category running
 */
export const run: Effect.Effect<
  DemoReport,
  DemoError,
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | SessionStore.SessionStore
  | TelemetryStore.TelemetryStore
> = Effect.gen(function*() {
  const config = yield* StablePrefix.decodeConfig(agentConfig)
  const memory = {
    scope: config.scope,
    background: config.background,
    spec: RoutingPresets.userBackground
  }
  const build = Effect.flatMap(
    StablePrefix.buildAgent(config),
    (built) => Effect.map(NativeRuntime.make({ ...built, memory }), (agent) => ({ built, agent }))
  )

  // Session 1: the agent learns a name.
  const one = yield* build
  const first = yield* session(one.agent, sessions.first, inputs.first)
  const savedId = first.messages.flatMap((message) =>
    message._tag === "ToolMessage"
      ? message.results.flatMap((result) => {
        const value = result.result
        return typeof value === "object" && value !== null && !Array.isArray(value) && "id" in value &&
            typeof value.id === "string" && !result.isFailure
          ? [value.id]
          : []
      })
      : []
  )
  const memories = yield* MemoryStore.MemoryStore
  const saved = (yield* memories.get(savedId, { scopes: [config.scope] })).records[0]
  const promotions = yield* PromotionStore.PromotionStore
  const promotion = (yield* promotions.getByRecords(savedId, { specKey: RoutingPresets.userBackground.key })).rows[0]
  // The session ends: its summary is stored for the prior-session digest of later sessions.
  const [summary] = yield* memories.write([
    ContextProjection.summaryInput(sessions.first, `${inputs.first} — the user introduced themselves.`)
  ])

  // Session 2: a new build of the same agent, whose prefix now holds what was promoted.
  const two = yield* build
  const second = yield* session(two.agent, sessions.second, inputs.second)
  return { first, saved, promotion, summary: summary!, second, prefix: two.built }
}).pipe(
  Effect.provide(
    Layer.mergeAll(
      ContextProjection.layer,
      ScriptedModel.layer(script),
      // Shown in the report and stored as prompt snapshots, so `engram inspect demo-2` reads them.
      PromptObserver.layerCapture.pipe(Layer.provide(PromptObserver.layerTelemetry())),
      RoutingSpecs.layerPresets,
      IdGenerator.sequential("mem")
    )
  )
)

// ---------------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------------

const fmt = (n: number): string => n.toLocaleString("en-US")

const describeMessage = (message: SessionStore.SessionMessage): ReadonlyArray<string> => {
  switch (message._tag) {
    case "OperatorMessage":
      return [`operator › ${message.text}`]
    case "AssistantMessage":
      return [
        ...(message.text !== "" ? [`model    › ${message.text}`] : []),
        ...message.toolCalls.map((call) => `model    → ${call.name} ${JSON.stringify(call.params)}`)
      ]
    case "ToolMessage":
      return message.results.map((result) => `tool     ← ${result.name} ${JSON.stringify(result.result)}`)
  }
}

/**
 * The request as lines: one header per fragment — message, role, source, part and memory ids —
 * followed by the fragment's text, indented.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderRequest = (request: ModelRequest.ModelRequest): ReadonlyArray<string> =>
  request.fragments.flatMap((fragment) => {
    const ids = fragment.memoryIds.length > 0 ? `memory ${fragment.memoryIds.join(", ")}` : "authored"
    const origin = fragment.source === "history" || fragment.source === "operator" || fragment.source === "turn"
      ? fragment.source
      : `${fragment.source} · ${fragment.label} · ${ids}`
    return [
      `  [${fragment.message}] ${fragment.role.padEnd(9)} ${origin}`,
      ...fragment.text.replace(/^\n+|\n+$/g, "").split("\n").map((line) => `      │ ${line}`)
    ]
  })

/**
 * The budget summary as lines: use against budget (in the budget's unit, the other unit beside
 * it), each section's status and size, what was shed or withheld, and warnings.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderBudget = (projection: ProjectionLayout.ProjectedContext): ReadonlyArray<string> => {
  const budget = projection.budget
  const use = budget.budgetTokens !== null
    ? `used ${fmt(budget.usedTokens)} of ${fmt(budget.budgetTokens)} tokens (${fmt(budget.usedChars)} chars)`
    : budget.budgetChars !== null
    ? `used ${fmt(budget.usedChars)} of ${fmt(budget.budgetChars)} chars (~${fmt(budget.usedTokens)} tokens)`
    : `used ${fmt(budget.usedTokens)} tokens (${fmt(budget.usedChars)} chars) of an unbounded budget`
  const lines = [`  ${use}, mode ${projection.mode}`]
  for (const section of projection.sections) {
    const ids = [...section.memoryIds, ...section.sessionIds.map((id) => `session ${id}`)]
    lines.push(
      `  ${section.label.padEnd(17)} ${section.status.padEnd(9)} ${fmt(section.tokens).padStart(6)} tokens ` +
        `${fmt(section.chars).padStart(6)} chars ` +
        `${String(section.items).padStart(3)} ${section.items === 1 ? "item " : "items"}` +
        `${section.shed > 0 ? `, ${section.shed} shed` : ""}` +
        (ids.length > 0 ? `  ${ids.join(", ")}` : "")
    )
  }
  for (const item of budget.withheld) lines.push(`  withheld ${item.ref} from ${item.section}: ${item.reason}`)
  for (const item of budget.shed) lines.push(`  shed ${item.ref} from ${item.section} (${fmt(item.chars)} chars)`)
  if (budget.suppressed.length > 0) lines.push(`  suppressed by the mode: ${budget.suppressed.join(", ")}`)
  for (const warning of budget.warnings) lines.push(`  warning: ${warning.message}`)
  return lines
}

/**
 * The demo's report as text, for a terminal.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (report: DemoReport, options: { readonly location: string }): string => {
  const lines: Array<string> = []
  const rule = (title: string) => lines.push("", `── ${title} ${"─".repeat(Math.max(3, 76 - title.length))}`)
  lines.push(`Engram demo: a scripted model (no network), stores in ${options.location}`)

  rule(`Session 1 (${report.first.sessionId})`)
  for (const message of report.first.messages) lines.push(...describeMessage(message).map((l) => `  ${l}`))
  lines.push("")
  if (report.saved !== undefined) {
    const r = report.saved
    lines.push(
      `  saved ${r.id}: ${r.kind}${r.label !== undefined ? ` · label "${r.label}"` : ""} · ${r.reviewState} review · ` +
        `from ${r.sourceType} (trust tier ${r.trustTier}) · scope ${r.scope}`
    )
  }
  if (report.promotion !== undefined) {
    const row = report.promotion
    const where = row.placement === null
      ? "declined by the spec"
      : row.placement.primitive === "background"
      ? `section ${row.placement.section}, key "${row.placement.key}"`
      : `${row.placementKey}`
    lines.push(
      `  promoted under ${row.specKey}@${row.specVersion} → ${where}` +
        (row.tier === null
          ? ""
          : ` (section tier ${row.tier}${row.tier === "auto" ? ": composes pending memories" : ""})`)
    )
  }
  lines.push(`  session summary stored as ${report.summary.id} (scope ${report.summary.scope}) for later digests`)

  rule(`Session 2 (${report.second.sessionId})`)
  for (const message of report.second.messages) lines.push(...describeMessage(message).map((l) => `  ${l}`))
  const composed = report.prefix.report.outcomes.filter((outcome) => outcome.status === "composed")
  lines.push(
    "",
    `  prefix built with ${composed.length} promoted ${composed.length === 1 ? "memory" : "memories"}: ` +
      (report.prefix.composedIds.join(", ") || "none")
  )

  const snapshot = report.second.snapshots[0]
  if (snapshot !== undefined) {
    rule(`What the model saw (session ${snapshot.sessionId}, turn ${snapshot.turn}, call ${snapshot.call})`)
    lines.push(`  tools offered: ${snapshot.tools.join(", ") || "none"}`)
    lines.push(...renderRequest(snapshot.request))
    rule("Projection budget")
    lines.push(...renderBudget(snapshot.projection))
  }
  return lines.join("\n")
}

/**
 * The demo's report as a JSON-safe document (`engram demo --json`).
 *
 * @since 0.1.0
 * @category rendering
 */
export const toJson = (report: DemoReport) => {
  const sessionJson = (s: DemoSession) => ({
    sessionId: s.sessionId,
    input: s.input,
    outcome: s.result._tag,
    text: s.result._tag === "Completed" ? s.result.text : null,
    calls: s.snapshots.map((snapshot) => ({
      turn: snapshot.turn,
      call: snapshot.call,
      tools: snapshot.tools,
      fragments: snapshot.request.fragments,
      budget: snapshot.projection.budget,
      sections: snapshot.projection.sections
    }))
  })
  return {
    first: sessionJson(report.first),
    saved: report.saved === undefined ? null : { id: report.saved.id, content: report.saved.content },
    promotion: report.promotion === undefined
      ? null
      : { placementKey: report.promotion.placementKey, tier: report.promotion.tier, spec: report.promotion.specKey },
    summary: { id: report.summary.id, scope: report.summary.scope },
    composedIds: report.prefix.composedIds,
    second: sessionJson(report.second)
  }
}
