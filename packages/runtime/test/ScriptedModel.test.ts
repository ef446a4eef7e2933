import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import { describe, expect, it } from "@effect/vitest"
import { MemoryTools } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Stream from "effect/Stream"
import { memoryStores } from "./agentFixtures.js"
import { companion } from "./utilities.js"

const echo: ScriptedModel.Script = (request) => [ScriptedModel.text(`echo: ${ScriptedModel.lastUserText(request)}`)]
const toolkit = Effect.provide(MemoryTools.MemoryToolkit, MemoryTools.layer(companion()))

describe("ScriptedModel", () => {
  it.effect("answers with what the script says and records every request as sent", () =>
    Effect.gen(function*() {
      const first = yield* LanguageModel.generateText({
        prompt: [{ role: "system", content: "be brief" }, { role: "user", content: "hello" }]
      })
      expect(first.text).toBe("echo: hello")
      expect(first.finishReason).toBe("stop")
      const second = yield* LanguageModel.generateText({ prompt: "again" })
      expect(second.text).toBe("echo: again")

      const requests = yield* ScriptedModel.requests
      expect(requests.map((r) => r.index)).toEqual([0, 1])
      expect(ScriptedModel.systemText(requests[0]!)).toBe("be brief")
      expect(ScriptedModel.userTexts(requests[0]!)).toEqual(["hello"])
      expect(requests[1]!.tools).toEqual([])
    }).pipe(Effect.provide(ScriptedModel.layer(echo))))

  it.effect("gives tool calls ids, offers the toolkit's tools, and lets @effect/ai run the handlers", () =>
    Effect.gen(function*() {
      const kit = yield* toolkit
      const response = yield* LanguageModel.generateText({ prompt: "I'm Doug", toolkit: kit })
      expect(response.finishReason).toBe("tool-calls")
      expect(response.toolCalls.map((call) => [call.id, call.name])).toEqual([["call-0-0", "memory_save"]])
      expect(response.toolResults[0]!.result).toMatchObject({ status: "saved" })
      const [request] = yield* ScriptedModel.requests
      expect(request!.tools).toEqual(["memory_save", "memory_recall"])

      // The tool result travels back in the next request, where the script can read it.
      const next = Prompt.merge(Prompt.make("I'm Doug"), Prompt.fromResponseParts(response.content))
      yield* LanguageModel.generateText({ prompt: next, toolkit: kit })
      const [, again] = yield* ScriptedModel.requests
      expect(ScriptedModel.pendingToolResults(again!).map((part) => part.name)).toEqual(["memory_save"])
    }).pipe(
      Effect.provide(ScriptedModel.layer((request) =>
        ScriptedModel.pendingToolResults(request).length > 0
          ? [ScriptedModel.text("saved")]
          : [ScriptedModel.toolCall("memory_save", { kind: "profile", content: "The user is Doug" })]
      )),
      Effect.provide(memoryStores)
    ))

  it.effect("a sequence fails like a provider when it runs out of replies", () =>
    Effect.gen(function*() {
      yield* LanguageModel.generateText({ prompt: "one" })
      const exit = yield* Effect.exit(LanguageModel.generateText({ prompt: "two" }))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(Exit.causeOption(exit).pipe((c) => c._tag === "Some" && String(c.value).includes("1 replies"))).toBe(true)
    }).pipe(Effect.provide(ScriptedModel.layer(ScriptedModel.sequence([[ScriptedModel.text("only one")]])))))

  it.effect("a script that throws becomes an AiError, not a defect", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(LanguageModel.generateText({ prompt: "boom" }))
      expect(error).toBeInstanceOf(AiError.UnknownError)
    }).pipe(
      Effect.provide(ScriptedModel.layer(() => {
        throw new Error("script bug")
      }))
    ))

  it.effect("streams the same reply", () =>
    Effect.gen(function*() {
      const parts = yield* Stream.runCollect(LanguageModel.streamText({ prompt: "hi" }))
      const text = Chunk.toArray(parts).flatMap((part) => (part.type === "text-delta" ? [part.delta] : [])).join("")
      expect(text).toBe("streamed")
    }).pipe(Effect.provide(ScriptedModel.layer(() => [ScriptedModel.text("streamed")]))))
})
