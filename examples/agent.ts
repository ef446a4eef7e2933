/**
 * A complete Engram agent on OpenAI: memory on one SQLite file, a companion persona whose
 * "About the User" section fills from what it is told, and one turn per run.
 *
 * ```sh
 * export OPENAI_API_KEY=sk-...
 * npm run example:agent -- "Hi, I'm Doug"
 * npm run example:agent -- "who am I?"        # a new session: the name is in the prompt now
 * ```
 *
 * Options come from the environment: `OPENAI_API_KEY` (required), `OPENAI_MODEL` (default
 * `gpt-4o-mini`), `OPENAI_BASE_URL` (an OpenAI-compatible endpoint), `ENGRAM_DB` (default
 * `./.engram/example.db`). Outside this repository, install `@engram/store-sqlite`,
 * `@engram/runtime`, `@effect/ai-openai@^0.41` and `@effect/platform-node@^0.108` and run it
 * with `npx tsx agent.ts "..."`.
 */
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { FetchHttpClient } from "@effect/platform"
import { RoutingPresets } from "@engram/core"
import { NativeRuntime, StablePrefix } from "@engram/runtime"
import { SqliteEngram } from "@engram/store-sqlite"
import { Cause, Config, Console, Effect, Exit, Layer, Option, Redacted, Schema } from "effect"

/** Raised before anything runs when `OPENAI_API_KEY` is not set. */
export class MissingApiKey extends Schema.TaggedError<MissingApiKey>()("MissingApiKey", {}) {
  override get message() {
    return "OPENAI_API_KEY is not set. This example calls OpenAI's API: export OPENAI_API_KEY=sk-... " +
      "(and OPENAI_BASE_URL for an OpenAI-compatible server), then run it again."
  }
}

const apiKey = Effect.flatMap(
  Config.option(Config.redacted("OPENAI_API_KEY")),
  Option.match({
    onNone: () => Effect.fail(new MissingApiKey()),
    onSome: (key) => Redacted.value(key).trim() === "" ? Effect.fail(new MissingApiKey()) : Effect.succeed(key)
  })
)

/** The model: OpenAI's Responses API over fetch. */
const Model = Layer.unwrapEffect(
  Effect.gen(function*() {
    const key = yield* apiKey
    const model = yield* Config.string("OPENAI_MODEL").pipe(Config.withDefault("gpt-4o-mini"))
    const apiUrl = yield* Config.option(Config.string("OPENAI_BASE_URL"))
    return OpenAiLanguageModel.layer({ model }).pipe(
      Layer.provide(OpenAiClient.layer({ apiKey: key, apiUrl: Option.getOrUndefined(apiUrl) })),
      Layer.provide(FetchHttpClient.layer)
    )
  })
)

/** Memory, sessions, telemetry, the projection and the preset specs: one file, one line. */
const Engram = Layer.unwrapEffect(
  Effect.map(
    Config.string("ENGRAM_DB").pipe(Config.withDefault("./.engram/example.db")),
    (filename) => SqliteEngram.layer({ filename })
  )
)

const agentConfig: StablePrefix.AgentConfigInput = {
  name: "companion",
  persona: "You are a friendly companion. You remember what people tell you about themselves.",
  toolGuidance: [{
    tool: "memory_save",
    guidance: "When the user tells you something durable about themselves, save it with a short label."
  }],
  background: { sections: [...RoutingPresets.userBackgroundSections.sections] },
  spec: RoutingPresets.userBackground.key,
  scope: "global"
}

const program = (input: string) =>
  Effect.gen(function*() {
    // The stable prefix composes what earlier sessions saved and the routing spec promoted.
    const agent = yield* NativeRuntime.fromConfig(agentConfig)
    const result = yield* NativeRuntime.runTurn({ agent, sessionId: `example-${Date.now()}`, input })
    yield* result._tag === "Completed"
      ? Console.log(result.text)
      : Console.log(`The turn is waiting for approval of: ${result.pending.map((call) => call.name).join(", ")}`)
  })

const input = process.argv.slice(2).join(" ").trim()

const main = Effect.zipRight(apiKey, program(input).pipe(Effect.provide(Model), Effect.provide(Engram)))

if (input === "") {
  console.error("usage: npm run example:agent -- \"your message\"")
  process.exitCode = 2
} else {
  Effect.runPromiseExit(main).then((exit) => {
    if (Exit.isSuccess(exit)) return
    const failure = Cause.failureOption(exit.cause)
    console.error(
      Option.isSome(failure) && failure.value instanceof MissingApiKey
        ? failure.value.message
        : Cause.pretty(exit.cause)
    )
    process.exitCode = 1
  })
}
