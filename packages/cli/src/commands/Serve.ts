/**
 * `engram serve [--port n] [--host h] [--agent config.json]`: the HTTP API (`/api`), its OpenAPI
 * document (`/openapi.json`), Swagger UI (`/docs`) and the review console (`/`), over the store
 * the global options name (`--db`, default `./.engram/engram.db`, or `--pg`). Requests need a
 * bearer token from `engram token create`.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as AccessTokens from "@engram/server/AccessTokens"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { toCliFailure } from "../CliError.js"
import * as Flags from "../Flags.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"
import { agentFlag, readAgentConfig } from "./Compose.js"
import { tokenTableUnavailable } from "./Token.js"

/**
 * `engram serve`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "serve",
  {
    port: Flags.withDefault(
      Flags.text("port", Flags.Port, "The port to listen on (0 picks a free one). Default: 8787.", "port"),
      8787
    ),
    host: Flags.withDefault(
      Flags.text("host", Flags.NonEmpty, "The address to listen on. Default: 127.0.0.1.", "host"),
      "127.0.0.1"
    ),
    agent: Flags.optional(
      agentFlag("The agent config the agent view and projection preview compose (default: user-background).")
    )
  },
  ({ agent, host, port }) =>
    Effect.gen(function*() {
      const config = agent === undefined ? undefined : yield* readAgentConfig(agent)
      const location = yield* StoreBackend.locationFor({ configured: config?.db })
      const stores = AccessTokens.layerSql.pipe(
        // Every store of the database: the prompt snapshots the session routes serve are there, and
        // forget removes their text in the same transaction. (The projection preview records nothing.)
        Layer.provideMerge(StoreBackend.layerObserved(location)),
        Layer.mapError(tokenTableUnavailable)
      )
      const settings = yield* Root.settings
      const [EngramServer, Listening] = yield* Effect.promise(() =>
        Promise.all([import("@engram/server/EngramServer"), import("../Listening.js")])
      )
      const server = EngramServer.layerServe({ port, host, agent: config?.config }).pipe(
        Listening.refuseListenErrors({ host, port, portFlag: "--port", hostFlag: "--host" }),
        Layer.provide(stores)
      )
      return yield* Layer.launch(
        Listening.announce({
          command: "serve",
          path: "/",
          store: StoreBackend.describeLocation(location),
          json: settings.json,
          detail: "console /, API /api, docs /docs"
        }).pipe(Layer.provideMerge(server))
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription(
    "Serve the HTTP API, its OpenAPI document (/openapi.json, /docs) and the review console (/). Every API request " +
      "and the console's sign-in need a bearer token: create one first with `engram token create`."
  )
)
