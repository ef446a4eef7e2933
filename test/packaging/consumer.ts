/**
 * The program the packaging test compiles and runs in a project outside the workspace, against
 * the packed tarballs: it writes a memory, searches it, projects a turn's context and runs one
 * scripted turn of a native agent, on one SQLite file (`SqliteEngram.layer`), and prints what it
 * saw as one JSON line, with the store's record count as `@engram/migrate` digests it. It imports
 * a subpath (`@engram/core/RoutingPresets`) and the testing entry point, as users do.
 */
import { ContextProjection, MemoryStore } from "@engram/core"
import * as RoutingPresets from "@engram/core/RoutingPresets"
import { StoreMigration } from "@engram/migrate"
import { NativeRuntime } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import { SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"

const filename = process.argv[2] ?? ":memory:"

// Answers from whatever reached the model: the projection carries the profile memory.
const script: ScriptedModel.Script = (request) => {
  const seen = ScriptedModel.promptJson(request.prompt)
  return [ScriptedModel.text(seen.includes("My name is Doug") ? "You are Doug." : "I don't know you yet.")]
}

const program = Effect.gen(function*() {
  const store = yield* MemoryStore.MemoryStore
  const [doug] = yield* store.write([
    { content: "My name is Doug", kind: "profile", label: "name", sourceType: "operator" }
  ])
  const { hits } = yield* store.search("doug", { deliverable: true })
  const digest = yield* StoreMigration.digest(store)
  const projection = yield* ContextProjection.ContextProjection
  const projected = yield* projection.project({
    sessionId: "consumer-0",
    turn: 0,
    query: "what do you know about Doug?",
    scopes: ["global"],
    mode: "native"
  })
  const agent = yield* NativeRuntime.fromConfig({
    name: "consumer",
    persona: "You are a friendly companion.",
    background: { sections: [...RoutingPresets.userBackgroundSections.sections] },
    spec: RoutingPresets.userBackground.key,
    scope: "global"
  })
  const turn = yield* NativeRuntime.runTurn({ agent, sessionId: "consumer-1", input: "what do you know about Doug?" })
  return {
    id: doug!.id,
    hits: hits.map((hit) => hit.record.id),
    digested: digest.count,
    projectedIds: projected.sections.flatMap((section) => section.memoryIds),
    turn: turn._tag,
    text: turn._tag === "Completed" ? turn.text : null
  }
})

const main = program.pipe(
  Effect.provide(ScriptedModel.layer(script)),
  Effect.provide(SqliteEngram.layer({ filename }))
)

Effect.runPromise(main).then(
  (result) => console.log(JSON.stringify(result)),
  (error: unknown) => {
    console.error(error)
    process.exitCode = 1
  }
)
