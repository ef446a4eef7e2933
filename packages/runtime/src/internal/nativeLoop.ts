/**
 * The body of `NativeRuntime`: building an agent, the turn, the resume and the round loop.
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Response from "@effect/ai/Response"
import type * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import { ContextProjection, type ProjectionLayout, type PromptSnapshot, SessionStore } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Agent from "../Agent.js"
import * as MemoryTools from "../MemoryTools.js"
import * as ModelRequest from "../ModelRequest.js"
import type {
  AgentToolkit,
  ApprovalDecision,
  ConfigOptions,
  NativeAgent,
  NativeAgentOptions,
  NativeMode,
  Tools,
  TurnContext,
  TurnError,
  TurnResult
} from "../NativeRuntime.js"
import {
  CallLimitReached,
  InvalidTurn,
  NothingToResume,
  SessionAwaitingApproval,
  ToolNameClash
} from "../NativeRuntimeError.js"
import * as PromptObserver from "../PromptObserver.js"
import * as StablePrefix from "../StablePrefix.js"
import * as TurnModule from "../Turn.js"

export const DEFAULT_MAX_CALLS = 16

type ToolName = keyof Tools & string

const memoryToolsIn = (mode: NativeMode, allowed: ReadonlyArray<ToolName> | undefined): ReadonlyArray<ToolName> =>
  mode === "incognito"
    ? []
    : (["memory_save", "memory_recall"] as const).filter((name) =>
      (allowed ?? (mode === "subagent" ? ["memory_recall"] : ["memory_save", "memory_recall"])).includes(name)
    )

// `Toolkit.handle` decodes its parameters with the tool's schema (`Schema.decodeUnknown`), so the
// encoded parameters a model sends are what it takes at run time; its static type names the
// decoded form, hence this one widening.
type HandleEncoded = AgentToolkit["handle"]

export const toolkitOf = <T extends Record<string, Tool.Any>>(withHandler: Toolkit.WithHandler<T>) =>
  Effect.map(Effect.context<Tool.Requirements<T[keyof T]>>(), (context): AgentToolkit => {
    const handle = withHandler.handle as unknown as HandleEncoded
    return {
      tools: withHandler.tools,
      handle: (name, params) => Effect.provide(handle(name, params), context)
    }
  })

/** The memory toolkit and the user's, as one; a name used twice is a `ToolNameClash`. */
const joinToolkits = (toolkits: ReadonlyArray<AgentToolkit>) =>
  Effect.gen(function*() {
    const owner = new Map<string, AgentToolkit>()
    for (const kit of toolkits) {
      for (const name of Object.keys(kit.tools)) {
        if (owner.has(name)) return yield* new ToolNameClash({ name })
        owner.set(name, kit)
      }
    }
    const joined: AgentToolkit = {
      tools: Object.fromEntries(toolkits.flatMap((kit) => Object.entries(kit.tools))),
      handle: (name, params) => {
        const kit = owner.get(name)
        return kit === undefined ? Effect.fail(new Error(`no tool is named ${name}`)) : kit.handle(name, params)
      }
    }
    return joined
  })

export const make = (options: NativeAgentOptions) =>
  Effect.gen(function*() {
    const memoryToolkit = yield* toolkitOf(yield* MemoryTools.handled(options.memory))
    const mode = options.mode ?? "native"
    const userToolkits = options.toolkits ?? []
    const toolkit = yield* joinToolkits([memoryToolkit, ...userToolkits])
    const approval = options.approval
    const needsApproval = approval === undefined
      ? () => false
      : typeof approval === "function"
      ? approval
      : (call: SessionStore.ToolCall) => approval.includes(call.name)
    // What the agent sends in its mode (the incognito rule lives in Agent.inMode).
    const sent = yield* Agent.inMode(options, mode)
    const agent: NativeAgent = {
      prefix: sent.prefix,
      composedIds: sent.composedIds,
      report: sent.report,
      identity: sent.identity,
      memory: options.memory,
      cacheHints: options.cacheHints === false ? undefined : options.cacheHints ?? ModelRequest.CACHE_HINTS,
      scopes: options.scopes ?? [options.memory.scope],
      mode,
      workingState: options.workingState,
      skills: options.skills,
      maxCalls: Math.max(1, Math.floor(options.maxCalls ?? DEFAULT_MAX_CALLS)),
      offered: [
        ...memoryToolsIn(mode, options.memoryTools),
        ...userToolkits.flatMap((kit) => Object.keys(kit.tools))
      ],
      toolkit,
      needsApproval,
      projection: options.projection,
      extraction: options.extraction
    }
    return agent
  })

export const fromConfig = (config: StablePrefix.AgentConfigInput, options: ConfigOptions) =>
  Effect.gen(function*() {
    const decoded = yield* StablePrefix.decodeConfig(config)
    if (decoded.spec === undefined) {
      return yield* new StablePrefix.InvalidAgentConfig({
        problem: `spec: a native agent needs a routing spec for its memory tools (e.g. "user-background")`
      })
    }
    const built = yield* StablePrefix.buildAgent(decoded)
    // A spec was named, so the build carries the memory settings it composed with.
    const memory = built.memory!
    const { memory: tools, ...rest } = options
    return yield* make({ ...rest, ...built, memory: { ...memory, ...tools } })
  })

// ---------------------------------------------------------------------------------------------
// JSON and tool calls
// ---------------------------------------------------------------------------------------------

const isJson = Schema.is(SessionStore.JsonValue)

/** A value as JSON: itself when it already is, else its JSON round trip (`undefined` → null). */
const toJson = (value: unknown): SessionStore.JsonValue => {
  if (isJson(value)) return value
  try {
    const text = JSON.stringify(value)
    return text === undefined ? null : (JSON.parse(text) as SessionStore.JsonValue)
  } catch {
    return String(value)
  }
}

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

const runCall = (
  agent: NativeAgent,
  sessionId: string,
  call: SessionStore.ToolCall
): Effect.Effect<SessionStore.ToolResult> => {
  if (!(agent.offered as ReadonlyArray<string>).includes(call.name)) {
    return Effect.succeed({
      id: call.id,
      name: call.name,
      isFailure: true,
      result: { error: `the tool ${call.name} is not available to this agent` }
    })
  }
  // The memory tools name the session a restatement came from (decision 0174).
  return agent.toolkit.handle(call.name, call.params).pipe(
    Effect.locally(MemoryTools.currentSession, sessionId),
    Effect.map((outcome): SessionStore.ToolResult => ({
      id: call.id,
      name: call.name,
      isFailure: outcome.isFailure,
      result: toJson(outcome.encodedResult)
    })),
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logWarning("a tool call failed").pipe(
          Effect.annotateLogs({ tool: call.name, problem: describe(error) })
        ),
        { id: call.id, name: call.name, isFailure: true, result: { error: describe(error) } }
      )
    ),
    Effect.withSpan("agent.tool", { attributes: { tool: call.name } })
  )
}

const denied = (call: SessionStore.ToolCall, reason: string | undefined): SessionStore.ToolResult => ({
  id: call.id,
  name: call.name,
  isFailure: true,
  result: {
    error: `the operator did not approve this call${reason !== undefined && reason !== "" ? `: ${reason}` : ""}`
  }
})

/** A call as stored: the tool's parameters re-encoded to the JSON the model sent. */
const storedCall = (
  agent: NativeAgent,
  part: { readonly id: string; readonly name: string; readonly params: unknown }
): SessionStore.ToolCall => {
  const tool: Tool.Any | undefined = agent.toolkit.tools[part.name]
  const encoded = tool === undefined
    ? Either.right(part.params)
    : Schema.encodeUnknownEither(tool.parametersSchema as Schema.Schema<unknown, unknown>)(part.params)
  return { id: part.id, name: part.name, params: toJson(Either.getOrElse(encoded, () => part.params)) }
}

interface Reply {
  readonly text: string
  readonly calls: ReadonlyArray<{ readonly id: string; readonly name: string; readonly params: unknown }>
  readonly usage: Response.Usage | undefined
}

const tokens = (n: number | undefined): number | null =>
  n === undefined || !Number.isFinite(n) || n < 0 ? null : Math.floor(n)

/** The usage the provider reported, or `undefined` when it reported no figure at all. */
const usageOf = (usage: Response.Usage | undefined): PromptSnapshot.TokenUsage | undefined => {
  if (usage === undefined) return undefined
  const reported = {
    inputTokens: tokens(usage.inputTokens),
    outputTokens: tokens(usage.outputTokens),
    totalTokens: tokens(usage.totalTokens),
    cachedInputTokens: tokens(usage.cachedInputTokens)
  }
  return Object.values(reported).every((n) => n === null) ? undefined : reported
}

/**
 * The agent's tools as `generateText` takes them: it describes the offered ones to the model and
 * decodes every call (one to a tool the mode does not offer is refused by `runCall`). It never
 * runs a handler: the loop runs every call itself.
 */
const modelToolkit = (agent: NativeAgent): Toolkit.WithHandler<Record<string, Tool.Any>> => ({
  tools: agent.toolkit.tools,
  handle: (name) => Effect.die(new Error(`the native loop runs tool calls itself (${String(name)})`))
})

const callModel = (agent: NativeAgent, request: ModelRequest.ModelRequest) =>
  agent.offered.length === 0
    ? Effect.map(LanguageModel.generateText({ prompt: request.prompt }), (response): Reply => ({
      text: response.text,
      calls: [],
      usage: response.usage
    }))
    : Effect.map(
      LanguageModel.generateText({
        prompt: request.prompt,
        toolkit: modelToolkit(agent),
        toolChoice: agent.offered.length === Object.keys(agent.toolkit.tools).length
          ? "auto"
          : { mode: "auto", oneOf: agent.offered },
        // The loop runs the calls itself: some wait for approval, and results are stored first.
        disableToolCallResolution: true
      }),
      (response): Reply => ({
        text: response.text,
        calls: response.toolCalls.filter((part) => !part.providerExecuted),
        usage: response.usage
      })
    )

// ---------------------------------------------------------------------------------------------
// The turn
// ---------------------------------------------------------------------------------------------

/** Everything fixed for the duration of one turn. The projection lives here and nowhere else. */
export interface Turn {
  readonly agent: NativeAgent
  readonly sessionId: string
  readonly turn: number
  readonly history: ReadonlyArray<SessionStore.SessionMessage>
  readonly input: SessionStore.OperatorMessage
  /** The turn's plan and projection (`Turn.open`): every call of the turn is composed from it. */
  readonly opened: TurnModule.Opened
  /** This turn's own projection settings over the agent's. */
  readonly settings?: ContextProjection.ProjectionOverrides | undefined
}

const validSession = (sessionId: string) =>
  Either.match(SessionStore.validateSessionId(sessionId), {
    onLeft: (problem) => Effect.fail(new InvalidTurn({ problem })),
    onRight: () => Effect.void
  })

export const isOperatorInput = (message: SessionStore.SessionMessage): message is SessionStore.OperatorMessage =>
  message._tag === "OperatorMessage" && !SessionStore.isLegacyContextFrame(message)

/** The turn number a new operator input opens: one more than the operator inputs stored. */
const nextTurn = (messages: ReadonlyArray<SessionStore.SessionMessage>): number =>
  messages.filter(isOperatorInput).length + 1

/**
 * The turn's plan and projection (`Turn.open`): the native agent is a `Turn.TurnAgent` (its mode,
 * scopes, working state, skills, cache hints and settings), so nothing here maps it again.
 */
export const open = (
  turn: Omit<Turn, "opened">,
  record = true
): Effect.Effect<TurnModule.Opened, ContextProjection.ProjectionFailure, ContextProjection.ContextProjection> =>
  TurnModule.open(
    turn.agent,
    { sessionId: turn.sessionId, turn: turn.turn, input: turn.input, history: turn.history, record },
    turn.settings
  )

/** Calls the model until it answers without calling a tool, a call needs approval, or the limit. */
const loop = (turn: Turn, startRounds: ReadonlyArray<SessionStore.SessionMessage>, startCall: number) =>
  Effect.gen(function*() {
    const sessions = yield* SessionStore.SessionStore
    const { agent, sessionId } = turn
    let rounds = startRounds
    let call = startCall
    while (true) {
      if (call >= agent.maxCalls) {
        return yield* new CallLimitReached({ sessionId, turn: turn.turn, calls: call })
      }
      const { request } = yield* TurnModule.call(turn.opened, { call, rounds, tools: agent.offered })
      const reply = yield* callModel(agent, request).pipe(
        Effect.tap((reply) => {
          const usage = usageOf(reply.usage)
          return usage === undefined ? Effect.void : Effect.zipRight(
            Effect.annotateCurrentSpan(
              Object.fromEntries(
                Object.entries(usage).flatMap(([k, v]) => (v === null ? [] : [[`engram.usage.${k}`, v]]))
              )
            ),
            PromptObserver.reportUsage({ sessionId, turn: turn.turn, call }, usage)
          )
        }),
        Effect.withSpan("agent.model.call", {
          attributes: {
            sessionId,
            turn: turn.turn,
            call,
            "engram.request.chars": request.fragments.reduce((n, f) => n + f.text.length, 0),
            "engram.request.messages": request.prompt.content.length,
            "engram.tools": agent.offered.length
          }
        })
      )
      call++
      const calls = reply.calls.map((part) => storedCall(agent, part))
      const assistant = new SessionStore.AssistantMessage({
        text: reply.text,
        toolCalls: calls,
        at: yield* DateTime.now
      })
      if (calls.length === 0) {
        yield* sessions.append(sessionId, [assistant])
        const done: TurnResult = {
          _tag: "Completed",
          sessionId,
          turn: turn.turn,
          text: reply.text,
          projection: turn.opened.projection,
          calls: call
        }
        return done
      }
      const gated = calls.filter(agent.needsApproval)
      if (gated.length > 0) {
        yield* sessions.append(sessionId, [assistant])
        yield* sessions.putInterrupt(
          sessionId,
          new SessionStore.PendingInterrupt({
            turn: turn.turn,
            toolCalls: gated,
            reason: `the operator's approval is needed for ${gated.map((c) => c.name).join(", ")}`,
            at: yield* DateTime.now,
            detail: { call }
          })
        )
        yield* Effect.logInfo("turn suspended for approval").pipe(
          Effect.annotateLogs({ sessionId, turn: turn.turn, tools: gated.map((c) => c.name).join(",") })
        )
        const suspended: TurnResult = {
          _tag: "Suspended",
          sessionId,
          turn: turn.turn,
          pending: gated,
          projection: turn.opened.projection,
          calls: call
        }
        return suspended
      }
      const results = yield* Effect.forEach(calls, (c) => runCall(agent, sessionId, c))
      const tool = new SessionStore.ToolMessage({ results, at: yield* DateTime.now })
      yield* sessions.append(sessionId, [assistant, tool])
      rounds = [...rounds, assistant, tool]
    }
  })

export const runTurn = (options: {
  readonly agent: NativeAgent
  readonly sessionId: string
  readonly input: string
  readonly settings?: ContextProjection.ProjectionOverrides | undefined
}): Effect.Effect<TurnResult, TurnError, TurnContext> =>
  Effect.gen(function*() {
    const { agent, sessionId } = options
    yield* validSession(sessionId)
    const sessions = yield* SessionStore.SessionStore
    const pending = yield* sessions.getInterrupt(sessionId)
    if (Option.isSome(pending)) {
      return yield* new SessionAwaitingApproval({
        sessionId,
        turn: pending.value.turn,
        tools: pending.value.toolCalls.map((call) => call.name)
      })
    }
    const history = (yield* sessions.load(sessionId)).messages
    const turnNumber = nextTurn(history)
    const input = new SessionStore.OperatorMessage({ text: options.input, at: yield* DateTime.now })
    const base = {
      agent,
      sessionId,
      turn: turnNumber,
      history,
      input,
      ...(options.settings !== undefined ? { settings: options.settings } : {})
    }
    // Projected once per turn; the value stays in this fiber and goes nowhere else.
    const opened = yield* open(base)
    yield* annotateTurn(agent, turnNumber, opened.projection)
    yield* sessions.append(sessionId, [input])
    return yield* loop({ ...base, opened }, [], 0).pipe(
      Effect.tap((result) => Effect.annotateCurrentSpan("engram.calls", result.calls)),
      Effect.tap(afterTurn(agent))
    )
  }).pipe(Effect.withSpan("agent.turn", { attributes: { sessionId: options.sessionId } }))

/**
 * Hands a completed turn's session to the agent's extraction (nothing when it was built without
 * one). It only enqueues: the turn's result and latency never depend on it.
 */
const afterTurn = (agent: NativeAgent) => (result: TurnResult) =>
  result._tag !== "Completed" || agent.extraction === undefined
    ? Effect.void
    : agent.extraction.schedule({ sessionId: result.sessionId, memory: agent.memory, mode: agent.mode })

/** The turn span's attributes: counts and sizes, never content. */
const annotateTurn = (agent: NativeAgent, turn: number, projection: ProjectionLayout.ProjectedContext) =>
  Effect.annotateCurrentSpan({
    "engram.turn": turn,
    "engram.mode": agent.mode,
    "engram.memories.prefix": agent.composedIds.length,
    "engram.memories.projected": projection.injection.memoryIds.length,
    "engram.budget.used_chars": projection.budget.usedChars,
    "engram.budget.used_tokens": projection.budget.usedTokens,
    "engram.budget.chars": projection.budget.budgetChars ?? -1,
    "engram.budget.tokens": projection.budget.budgetTokens ?? -1,
    "engram.budget.shed": projection.budget.shed.length
  })

export const resume = (options: {
  readonly agent: NativeAgent
  readonly sessionId: string
  readonly decision: ApprovalDecision
}): Effect.Effect<TurnResult, Exclude<TurnError, SessionAwaitingApproval> | NothingToResume, TurnContext> =>
  Effect.gen(function*() {
    const { agent, decision, sessionId } = options
    yield* validSession(sessionId)
    const sessions = yield* SessionStore.SessionStore
    const nothing = (problem: string) => new NothingToResume({ sessionId, problem })
    const interrupt = yield* sessions.getInterrupt(sessionId)
    if (Option.isNone(interrupt)) return yield* nothing("it has no turn waiting for approval")
    const messages = (yield* sessions.load(sessionId)).messages
    let start = messages.length - 1
    while (start >= 0 && !isOperatorInput(messages[start]!)) start--
    if (start < 0) return yield* nothing("it holds no operator input")
    const input = messages[start] as SessionStore.OperatorMessage
    const rounds = messages.slice(start + 1)
    const visible = SessionStore.modelView(rounds).messages
    const last = visible[visible.length - 1]
    const waiting = interrupt.value.toolCalls
    if (
      last === undefined || last._tag !== "AssistantMessage" ||
      !waiting.every((pending) => last.toolCalls.some((call) => call.id === pending.id))
    ) {
      return yield* nothing("the stored session does not end with the tool calls that wait for approval")
    }
    const base = { agent, sessionId, turn: interrupt.value.turn, history: messages.slice(0, start), input }
    // A resumed turn starts without its projection: project again, once, with the newest input.
    const opened = yield* open(base)
    yield* annotateTurn(agent, base.turn, opened.projection)

    const approved = (call: SessionStore.ToolCall): boolean => {
      switch (decision._tag) {
        case "ApproveAll":
          return true
        case "DenyAll":
          return false
        case "ApproveOnly":
          return decision.ids.includes(call.id)
      }
    }
    const reason = decision._tag === "ApproveAll" ? undefined : decision.reason
    const isWaiting = (call: SessionStore.ToolCall) => waiting.some((pending) => pending.id === call.id)
    const results = yield* Effect.forEach(
      last.toolCalls,
      (call) =>
        !isWaiting(call) || approved(call) ? runCall(agent, sessionId, call) : Effect.succeed(denied(call, reason))
    )
    const tool = new SessionStore.ToolMessage({ results, at: yield* DateTime.now })
    yield* sessions.append(sessionId, [tool])
    yield* sessions.clearInterrupt(sessionId)
    const calls = visible.filter((message) => message._tag === "AssistantMessage").length
    return yield* loop({ ...base, opened }, [...rounds, tool], calls).pipe(Effect.tap(afterTurn(agent)))
  }).pipe(Effect.withSpan("agent.resume", { attributes: { sessionId: options.sessionId } }))
