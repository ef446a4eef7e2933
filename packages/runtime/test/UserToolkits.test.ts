/**
 * The user's own `@effect/ai` toolkits beside the memory toolkit, through `NativeRuntime`.
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { describe, expect, it } from "@effect/vitest"
import type { SessionStore } from "@engram/core"
import { NativeRuntime } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { agent, environment, stored } from "./agentFixtures.js"

/** A service the user's handler needs: provided when the toolkit is made, not at run time. */
class Forecasts extends Context.Tag("test/Forecasts")<Forecasts, { readonly at: (city: string) => string }>() {}

const Weather = Tool.make("weather", {
  description: "The weather in a city.",
  parameters: { city: Schema.String },
  success: Schema.Struct({ forecast: Schema.String })
})
const WeatherToolkit = Toolkit.make(Weather)
const weatherToolkit = Effect.flatMap(
  Effect.provide(
    WeatherToolkit,
    WeatherToolkit.toLayer(Effect.map(Forecasts, (forecasts) => ({
      weather: ({ city }: { readonly city: string }) => Effect.succeed({ forecast: forecasts.at(city) })
    })))
  ),
  NativeRuntime.toolkit
).pipe(Effect.provideService(Forecasts, { at: (city) => `sunny in ${city}` }))

const Clashing = Toolkit.make(Tool.make("memory_save", { description: "mine", parameters: {}, success: Schema.String }))
const clashing = Effect.flatMap(
  Effect.provide(Clashing, Clashing.toLayer({ memory_save: () => Effect.succeed("no") })),
  NativeRuntime.toolkit
)

/** Asks for the weather, then answers with the tool's result. */
const script: ScriptedModel.Script = (request) => {
  const pending = ScriptedModel.pendingToolResults(request)
  return pending.length > 0
    ? [ScriptedModel.text(`Forecast: ${JSON.stringify(pending[0]!.result)}`)]
    : [ScriptedModel.toolCall("weather", { city: "Lisbon" })]
}

describe("user toolkits", () => {
  it.effect("are offered beside the memory tools and run with the services captured at build time", () =>
    Effect.gen(function*() {
      const weather = yield* agent({ toolkits: [yield* weatherToolkit] })
      const result = yield* NativeRuntime.runTurn({ agent: weather, sessionId: "s-1", input: "Weather?" })
      const [first] = yield* ScriptedModel.requests
      expect(first!.tools).toEqual(["memory_save", "memory_recall", "weather"])
      expect(result).toMatchObject({ _tag: "Completed", text: "Forecast: {\"forecast\":\"sunny in Lisbon\"}" })
      const tool = (yield* stored("s-1"))[2] as SessionStore.ToolMessage
      expect(tool.results[0]).toMatchObject({
        name: "weather",
        isFailure: false,
        result: { forecast: "sunny in Lisbon" }
      })
    }).pipe(Effect.provide(environment(script))))

  it.effect("an incognito agent keeps the user's tools and loses the memory tools", () =>
    Effect.gen(function*() {
      const hidden = yield* agent({ mode: "incognito", toolkits: [yield* weatherToolkit] })
      yield* NativeRuntime.runTurn({ agent: hidden, sessionId: "s-1", input: "Weather?" })
      const [first] = yield* ScriptedModel.requests
      expect(first!.tools).toEqual(["weather"])
    }).pipe(Effect.provide(environment(script))))

  it.effect("a name clash — with a memory tool or between the user's toolkits — is a typed error at build time", () =>
    Effect.gen(function*() {
      const withMemory = yield* Effect.flip(agent({ toolkits: [yield* clashing] }))
      expect(withMemory).toMatchObject({ _tag: "ToolNameClash", name: "memory_save" })
      const twice = yield* Effect.flip(agent({ toolkits: [yield* weatherToolkit, yield* weatherToolkit] }))
      expect(twice).toMatchObject({ _tag: "ToolNameClash", name: "weather" })
      expect(twice.message).toContain("rename one")
    }).pipe(Effect.provide(environment(script))))

  it.effect("approval rules apply to a user's tool: the call waits, and runs only once approved", () =>
    Effect.gen(function*() {
      const careful = yield* agent({ toolkits: [yield* weatherToolkit], approval: ["weather"] })
      const suspended = yield* NativeRuntime.runTurn({ agent: careful, sessionId: "s-1", input: "Weather?" })
      expect(suspended).toMatchObject({ _tag: "Suspended", pending: [{ name: "weather" }] })
      expect((yield* stored("s-1")).map((m) => m._tag)).toEqual(["OperatorMessage", "AssistantMessage"])
      const done = yield* NativeRuntime.resume({ agent: careful, sessionId: "s-1", decision: NativeRuntime.approveAll })
      expect(done).toMatchObject({ _tag: "Completed", text: "Forecast: {\"forecast\":\"sunny in Lisbon\"}" })
    }).pipe(Effect.provide(environment(script))))
})
