/**
 * `engram mcp [--agent <config.json>] [--scope <scope>] [--http <port>]`: serves the store's
 * memory tools to an MCP client — `memory_save` and `memory_recall` exactly as the native runtime
 * offers them (same gate, routing and promotion), plus `memory_list`, `memory_review` and `memory_forget` for
 * operators.
 *
 * Over standard input and output by default (what desktop agents and editors launch); with
 * `--http <port>`, over streamable HTTP at `http://<host>:<port>/mcp`. The routing spec, the
 * declared Background and the scope come from the agent config (as `engram compose` reads it);
 * without one, the `user-background` preset in scope `global`. `--scope` overrides the scope.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import type * as MemoryRecord from "@engram/core/MemoryRecord"
import * as RoutingPresets from "@engram/core/RoutingPresets"
import * as RoutingSpecs from "@engram/core/RoutingSpecs"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Flags from "../Flags.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"
import { agentFlag, readAgentConfig } from "./Compose.js"

const refuse = (problem: string) => new CliFailure({ problem, exitCode: ExitCode.refused })

/**
 * The memory tools' configuration `engram mcp` serves: from the agent config when given (its
 * `spec` is required: routing is what a save is gated by), else the `user-background` preset;
 * `scope` overrides the config's scope.
 *
 * @since 0.1.0
 * @category config
 */
export const memoryConfig = (
  options: { readonly agent: string | undefined; readonly scope: MemoryRecord.Scope | undefined }
) =>
  Effect.gen(function*() {
    if (options.agent === undefined) {
      return {
        memory: {
          scope: options.scope ?? "global",
          background: RoutingPresets.userBackgroundSections,
          spec: RoutingPresets.userBackground
        },
        db: undefined
      }
    }
    const { config, db } = yield* readAgentConfig(options.agent)
    if (config.spec === undefined) {
      return yield* refuse(
        `the agent config ${options.agent} names no spec: memory_save routes every save by the agent's routing spec ` +
          `(e.g. "spec": "user-background")`
      )
    }
    const spec = yield* Effect.provide(
      Effect.flatMap(RoutingSpecs.RoutingSpecs, (specs) => specs.resolve(config.spec!)),
      RoutingSpecs.layerPresets
    )
    return { memory: { scope: options.scope ?? config.scope, background: config.background, spec }, db }
  })

/**
 * `engram mcp`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "mcp",
  {
    agent: Flags.optional(
      agentFlag("The agent config: spec, background, scope, and optionally db (relative to the file).")
    ),
    scope: Flags.optional(
      Flags.text(
        "scope",
        Flags.Scope,
        "The scope saves land in and recall reads (default: the agent's, else global).",
        "scope"
      )
    ),
    http: Flags.optional(
      Flags.text(
        "http",
        Flags.Port,
        "Serve streamable HTTP on this port (path /mcp) instead of standard input/output.",
        "port"
      )
    ),
    host: Flags.withDefault(
      Flags.text("host", Flags.NonEmpty, "The address --http listens on (default 127.0.0.1).", "host"),
      "127.0.0.1"
    )
  },
  (options) =>
    Effect.gen(function*() {
      const { db, memory } = yield* memoryConfig({ agent: options.agent, scope: options.scope })
      const location = yield* StoreBackend.locationFor({ configured: db })
      const port = options.http
      const [EngramMcp, NodeHttpServer, { createServer }, Listening, settings] = yield* Effect.all([
        Effect.promise(() => import("@engram/mcp/EngramMcp")),
        Effect.promise(() => import("@effect/platform-node/NodeHttpServer")),
        Effect.promise(() => import("node:http")),
        Effect.promise(() => import("../Listening.js")),
        Root.settings
      ])
      // Over HTTP, one line says where the server is once it listens (stdout is the protocol over stdio).
      const server = port === undefined
        ? EngramMcp.layerStdio({ memory })
        : Listening.announce({
          command: "mcp",
          path: "/mcp",
          store: StoreBackend.describeLocation(location),
          json: settings.json,
          detail: `scope ${memory.scope}, spec ${memory.spec.key}`
        }).pipe(
          Layer.provideMerge(EngramMcp.layerHttpServe({ memory })),
          Layer.provideMerge(
            NodeHttpServer.layer(createServer, { port, host: options.host }).pipe(
              Listening.refuseListenErrors({ host: options.host, port, portFlag: "--http", hostFlag: "--host" })
            )
          )
        )
      yield* Effect.logInfo("engram mcp serving").pipe(
        Effect.annotateLogs({
          scope: memory.scope,
          spec: memory.spec.key,
          store: StoreBackend.describeLocation(location)
        })
      )
      return yield* Layer.launch(server.pipe(Layer.provide(StoreBackend.layerWithPromotions(location))))
    }).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription(
    "Serve the memory tools (memory_save, memory_recall, memory_list, memory_review, memory_forget) to an MCP client over stdio " +
      "or streamable HTTP."
  )
)
