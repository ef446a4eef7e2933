/**
 * Fixtures for the native runtime tests: every store in memory (sequential ids), the real
 * `ContextProjection` over them, a scripted model and a capturing prompt observer.
 */
import {
  ContextProjection,
  IdGenerator,
  type MemoryRecord,
  MemoryStore,
  ProjectionLayout,
  PromotionStore,
  type PromptFragment,
  RoutingPresets,
  SessionStore,
  TelemetryStore
} from "@engram/core"
import { NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** Fresh in-memory stores for each build. */
export const memoryStores = Layer.mergeAll(
  // Forget cascades to the promotion rows and the telemetry, as every shipped wiring's does.
  MemoryStore.layerMemoryCascading.pipe(
    Layer.provideMerge(Layer.mergeAll(PromotionStore.layerMemory, TelemetryStore.layerMemory))
  ),
  SessionStore.layerMemory,
  IdGenerator.sequential("mem")
)

/**
 * Everything a turn needs: the stores, the projection over them, the scripted model and a
 * capturing observer.
 */
export const environment = (
  script: ScriptedModel.Script,
  settings: Partial<ContextProjection.ProjectionSettings> = {}
) =>
  Layer.mergeAll(
    Layer.effect(ContextProjection.ContextProjection, ContextProjection.make(settings)),
    ScriptedModel.layer(script),
    PromptObserver.layerCapture
  ).pipe(Layer.provideMerge(memoryStores))

/** The memory tools' configuration of a companion in `global`. */
export const memory = {
  scope: "global",
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground
} as const

/** A stable prefix with one authored section. */
export const prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData> = [
  { name: "identity", source: "role", fragments: [{ source: "authored", text: "You are a companion." }] }
]

/** An agent over the stores in context. */
export const agent = (options: Partial<NativeRuntime.NativeAgentOptions> = {}) =>
  NativeRuntime.make({ prefix, memory, ...options })

/** Writes records straight into the store (as an operator would). */
export const seed = (inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>) =>
  Effect.flatMap(
    MemoryStore.MemoryStore,
    (store) => store.write(inputs.map((input) => ({ scope: "global", sourceType: "operator", ...input })))
  )

/** The projection message of a request: the user message that begins with a projection tag. */
export const projectionText = (request: ScriptedModel.ScriptedRequest): ReadonlyArray<string> =>
  ScriptedModel.userTexts(request).filter((text) => ProjectionLayout.containsProjection(text))

/** Every text a stored message holds: its text, tool parameters and tool results. */
export const storedTexts = (message: SessionStore.SessionMessage): ReadonlyArray<string> => {
  switch (message._tag) {
    case "OperatorMessage":
      return [message.text]
    case "AssistantMessage":
      return [message.text, ...message.toolCalls.map((call) => JSON.stringify(call.params))]
    case "ToolMessage":
      return message.results.map((result) => JSON.stringify(result.result))
  }
}

/** A session's stored messages. */
export const stored = (sessionId: string) =>
  Effect.map(Effect.flatMap(SessionStore.SessionStore, (store) => store.load(sessionId)), (history) => history.messages)

/** A session's injection-log rows. */
export const injections = (sessionId: string) =>
  Effect.map(
    Effect.flatMap(TelemetryStore.TelemetryStore, (store) => store.listInjections(sessionId)),
    (log) => log.rows
  )
