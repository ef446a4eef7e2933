/**
 * `engram serve [--port n] [--host h] [--agent config.json]`: the HTTP API (`/api`), its OpenAPI
 * document (`/openapi.json`), Swagger UI (`/docs`) and the review console (`/`), over the store
 * the global options name (`--db`, default `./.engram/engram.db`, or `--pg`). Requests need a
 * bearer token from `engram token create`.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { AccessTokens, EngramServer } from "@engram/server"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"
import { readAgentConfig } from "./Compose.js"

/**
 * `engram serve`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "serve",
  {
    port: Options.integer("port").pipe(
      Options.withDescription("The port to listen on (0 picks a free one)."),
      Options.withDefault(8787)
    ),
    host: Options.text("host").pipe(
      Options.withDescription("The address to listen on."),
      Options.withDefault("127.0.0.1")
    ),
    agent: Options.file("agent").pipe(
      Options.withPseudoName("config.json"),
      Options.withDescription(
        "The agent config the agent view and projection preview compose (default: user-background)."
      ),
      Options.optional
    )
  },
  ({ agent, host, port }) =>
    Effect.gen(function*() {
      if (port < 0 || port > 65_535) {
        return yield* new CliFailure({ problem: `--port ${port} is not a port (0-65535)`, exitCode: ExitCode.refused })
      }
      const settings = yield* Root.settings
      const config = Option.isSome(agent) ? yield* readAgentConfig(agent.value) : undefined
      const location = config?.db !== undefined && !settings.dbGiven && settings.pg === undefined
        ? { db: config.db }
        : yield* StoreBackend.locationOf(settings)
      const stores = AccessTokens.layerSql.pipe(
        // Every store of the database: the prompt snapshots the session routes serve are there, and
        // forget removes their text in the same transaction. (The projection preview records nothing.)
        Layer.provideMerge(StoreBackend.layerObserved(location)),
        Layer.mapError((error) =>
          error._tag === "SqlError"
            ? new CliFailure({
              problem: `the token table cannot be opened: ${error.message}`,
              exitCode: ExitCode.unavailable
            })
            : error
        )
      )
      yield* Effect.logInfo("engram serve").pipe(
        Effect.annotateLogs({
          store: StoreBackend.describeLocation(location),
          console: "/",
          api: "/api",
          docs: "/docs"
        })
      )
      return yield* Layer.launch(
        EngramServer.layerServe({ port, host, agent: config?.config }).pipe(Layer.provide(stores))
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription("Serve the HTTP API, its OpenAPI document (/openapi.json, /docs) and the review console (/).")
)
