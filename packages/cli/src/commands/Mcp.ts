/**
 * `engram mcp [--agent <config.json>] [--scope <scope>] [--http <port>]`: serves the agent's
 * context and the store's memory tools to an MCP client — the composed Background and identity
 * as `initialize` instructions, the resource `engram://context` and the tool `memory_context`;
 * `memory_save` and `memory_recall` exactly as the native runtime offers them (same gate, routing
 * and promotion), plus `memory_list`, `memory_review` and `memory_forget` for operators.
 *
 * Over standard input and output by default (what desktop agents and editors launch); with
 * `--http <port>`, over streamable HTTP at `http://<host>:<port>/mcp`, answering only requests
 * whose `Host` is a loopback name or `--host` (add more with `--allowed-host`) and whose `Origin`,
 * if any, is a page on one of those hosts or an `--allowed-origin`; with `ENGRAM_MCP_TOKEN` set,
 * only requests that send it as a bearer token — and a `--host` beyond loopback refuses to start
 * without it. The agent (persona,
 * guidelines, routing spec, declared Background, scope) comes from the agent config (as `engram
 * compose` reads it); without one, the `user-background` preset in scope `global`. `--scope`
 * overrides the scope. With `--embedder test|local|openai`, `memory_recall` searches hybrid (the store's
 * vectors from `engram embed` next to its keyword index) and `memory_save` stores a vector per memory;
 * without it, keywords only.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import type * as MemoryRecord from "@engram/core/MemoryRecord"
import * as RoutingPresets from "@engram/core/RoutingPresets"
import * as RoutingSpecs from "@engram/core/RoutingSpecs"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Embedder from "../Embedder.js"
import * as Flags from "../Flags.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"
import { agentFlag, readAgentConfig } from "./Compose.js"

const refuse = (problem: string) => new CliFailure({ problem, exitCode: ExitCode.refused })

/**
 * The environment variable holding the bearer token `engram mcp --http` requires of every request
 * when set — and must be set to listen on an address beyond loopback.
 *
 * @since 0.1.0
 * @category config
 */
export const MCP_TOKEN_ENV = "ENGRAM_MCP_TOKEN"

/**
 * Whether `host` is a loopback address or name (127.0.0.0/8, ::1, localhost). Pure.
 *
 * @since 0.1.0
 * @category config
 */
export const isLoopback = (host: string): boolean => {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, "$1")
  return name === "localhost" || name === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)
}

/**
 * The memory tools' configuration `engram mcp` serves, and the agent whose context it delivers:
 * from the agent config when given (its `spec` is required: routing is what a save is gated by),
 * else the `user-background` preset and no authored sections; `scope` overrides the config's scope.
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
        agent: undefined,
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
    return {
      memory: { scope: options.scope ?? config.scope, background: config.background, spec },
      agent: config,
      db
    }
  })

/**
 * The host names `engram mcp --http` answers: the loopback names (`EngramMcp.LOOPBACK_HOSTS`, passed in so
 * that this module loads no MCP code), the address it listens on
 * (unless a wildcard) and every `--allowed-host`.
 *
 * @since 0.1.0
 * @category config
 */
export const allowedHosts = (
  loopback: ReadonlyArray<string>,
  host: string,
  extra: ReadonlyArray<string>
): ReadonlyArray<string> => {
  const listening = host === "0.0.0.0" || host === "::" ? [] : [host.includes(":") ? `[${host}]` : host]
  return [...new Set([...loopback, ...listening, ...extra].map((name) => name.toLowerCase()))]
}

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
      Flags.text(
        "host",
        Flags.NonEmpty,
        "The address --http listens on (default 127.0.0.1); beyond loopback, ENGRAM_MCP_TOKEN must be set.",
        "host"
      ),
      "127.0.0.1"
    ),
    allowedHost: Flags.repeated(
      Flags.text(
        "allowed-host",
        Flags.NonEmpty,
        "With --http, also answer requests whose Host header names this host (default: loopback names and --host).",
        "name"
      )
    ),
    allowedOrigin: Flags.repeated(
      Flags.text(
        "allowed-origin",
        Flags.NonEmpty,
        "With --http, answer browser requests from this origin (scheme://host[:port]) only (default: pages on an " +
          "allowed host).",
        "origin"
      )
    ),
    ...Embedder.recallOptions
  },
  (options) =>
    Effect.gen(function*() {
      const { agent, db, memory } = yield* memoryConfig({ agent: options.agent, scope: options.scope })
      const location = yield* StoreBackend.locationFor({ configured: db })
      const port = options.http
      const token = Option.getOrUndefined(
        yield* Config.option(Config.redacted(MCP_TOKEN_ENV)).pipe(Effect.orElseSucceed(() => Option.none()))
      )
      const bearerToken = token === undefined || Redacted.value(token).trim() === "" ? undefined : Redacted.value(token)
      if (port !== undefined && !isLoopback(options.host) && bearerToken === undefined) {
        // Anyone who reaches the port could read and write the memory: no credential, no listening.
        return yield* refuse(
          `--host ${options.host} is beyond loopback and MCP over HTTP would answer anyone who reaches it: set ` +
            `${MCP_TOKEN_ENV} to a secret every request must send as "Authorization: Bearer <token>"`
        )
      }
      const [EngramMcp, ContextProjection, PromptObserver, NodeHttpServer, { createServer }, Listening, settings] =
        yield* Effect.all([
          Effect.promise(() => import("@engram/mcp/EngramMcp")),
          Effect.promise(() => import("@engram/core/ContextProjection")),
          Effect.promise(() => import("@engram/runtime/PromptObserver")),
          Effect.promise(() => import("@effect/platform-node/NodeHttpServer")),
          Effect.promise(() => import("node:http")),
          Effect.promise(() => import("../Listening.js")),
          Root.settings
        ])
      yield* Effect.logInfo("engram mcp serving").pipe(
        Effect.annotateLogs({
          scope: memory.scope,
          spec: memory.spec.key,
          store: StoreBackend.describeLocation(location)
        })
      )
      // Every context the server hands out is projected, logged and snapshotted as a native turn is.
      const context = Layer.mergeAll(ContextProjection.layer, PromptObserver.layerTelemetry()).pipe(
        Layer.provideMerge(StoreBackend.layerObserved(location, Embedder.layer(options)))
      )
      if (port === undefined) {
        // Until standard input ends; then the command succeeds.
        return yield* EngramMcp.serveStdio({ memory, agent }).pipe(Effect.provide(context))
      }
      // Over HTTP, one line says where the server is once it listens (stdout is the protocol over stdio).
      return yield* Layer.launch(
        Listening.announce({
          command: "mcp",
          path: "/mcp",
          store: StoreBackend.describeLocation(location),
          json: settings.json,
          detail: `scope ${memory.scope}, spec ${memory.spec.key}`
        }).pipe(
          Layer.provideMerge(
            EngramMcp.layerHttpServe({ memory, agent }, {
              allowedHosts: allowedHosts(EngramMcp.LOOPBACK_HOSTS, options.host, options.allowedHost ?? []),
              allowedOrigins: options.allowedOrigin,
              bearerToken
            })
          ),
          Layer.provideMerge(
            NodeHttpServer.layer(createServer, { port, host: options.host }).pipe(
              Listening.refuseListenErrors({ host: options.host, port, portFlag: "--http", hostFlag: "--host" })
            )
          ),
          Layer.provide(context)
        )
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription(
    "Serve the agent's context (initialize instructions, the engram://context resource, memory_context) and the memory " +
      "tools (memory_save, memory_recall, memory_list, memory_review, memory_forget) to an MCP client over stdio or " +
      "streamable HTTP; --embedder test|local|openai makes memory_recall hybrid."
  )
)
