/**
 * An Agent Client Protocol (ACP) client that gives an external agent Engram's projected context.
 *
 * Engram acts as the ACP *client*: it starts (or connects to) an ACP agent, opens sessions, and
 * for every prompt it sends, asks the `ContextAssembler` to compose the turn (`compose`: the
 * agent's stable prefix and the turn's projection, assembled against the same build of the agent)
 * and sends, as text blocks in front of the prompt content:
 *
 * ```text
 * text       the stable prefix — on a session's first prompt, and whenever it changed since
 * text       the projected context (<working_state>, <skills_index>, <injected_memory> …)
 * …          the prompt content as given
 * ```
 *
 * ACP has no system-prompt field, hence the prefix block. The agent keeps its own history (the
 * external runtime's storage); the projection is recomposed for every prompt and written nowhere
 * but the injection log and, with `PromptObserver.layerTelemetry` provided, the turn's prompt
 * snapshot. An empty prefix or projection sends no block. What the agent streams back
 * (`session/update` notifications) is collected per prompt, and its answer is recorded as the
 * session's history for the next snapshot; permission requests are declined unless a handler is
 * given.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ContextProjection } from "@engram/core"
 * import { AcpClient, ContextAssembler } from "@engram/runtime"
 *
 * const program = Effect.scoped(Effect.gen(function*() {
 *   const agent = yield* AcpClient.spawn({ command: "my-acp-agent", args: ["--stdio"] })
 *   const session = yield* agent.newSession({ cwd: process.cwd(), sessionId: "s-1" })
 *   const outcome = yield* agent.prompt(session, "What did we decide about the migration?")
 *   return outcome.text
 * }))
 * // provide ContextAssembler.layer({ scopes: ["global"] }) over ContextProjection.layer and the stores
 * ```
 *
 * @since 0.1.0
 */
import type * as Acp from "@agentclientprotocol/sdk"
import type { ProjectionLayout } from "@engram/core"
import type * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import type { AssembleOptions, AssemblyError, ContextAssembler } from "./ContextAssembler.js"
import * as internal from "./internal/acpClient.js"
import type * as ModelRequest from "./ModelRequest.js"

/**
 * Talking to the ACP agent failed: it could not be started, it closed the connection, or it
 * answered a request with an error. `operation` names the request; `stderr` holds the last
 * output the agent process wrote to its standard error, when there is one.
 *
 * @since 0.1.0
 * @category errors
 */
export const AcpError = internal.AcpError
/** @since 0.1.0 @category errors */
export type AcpError = internal.AcpError

/**
 * How to start an ACP agent process: it speaks newline-delimited JSON-RPC on its standard input
 * and output.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentProcess {
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly cwd?: string | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
}

/**
 * Options of a connection: how to answer the agent's permission requests (default: decline
 * them), who Engram says it is, and the MCP servers every session is given in `session/new` —
 * Engram's own (`EngramMcp.acpStdioServer` / `acpHttpServer` from `@engram/mcp`), so the agent's
 * saves go through the same gate and routing as a native agent's. The stable prefix comes from
 * the `ContextAssembler`'s `agent` (give it `StablePrefix.buildAgent(config)` to follow promotions
 * mid-session).
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectOptions {
  readonly requestPermission?:
    | ((request: Acp.RequestPermissionRequest) => Promise<Acp.RequestPermissionResponse>)
    | undefined
  readonly clientInfo?: { readonly name: string; readonly version: string } | undefined
  readonly mcpServers?: ReadonlyArray<Acp.McpServer> | undefined
}

/**
 * An open ACP session: the agent's session id and the Engram session id projections are
 * assembled (and logged) for.
 *
 * @since 0.1.0
 * @category models
 */
export interface AcpSession {
  readonly acpSessionId: string
  readonly engramSessionId: string
}

/**
 * The outcome of one prompt: why the agent stopped, the turn's request as composed (and
 * snapshotted) by the assembler, the projection that was sent, the exact content blocks sent
 * ({@link promptBlocks} of the request), every `session/update` the agent streamed during the
 * prompt, and the text of its message chunks joined.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptOutcome {
  readonly stopReason: Acp.StopReason
  readonly request: ModelRequest.ModelRequest
  readonly projection: ProjectionLayout.ProjectedContext
  readonly sent: ReadonlyArray<Acp.ContentBlock>
  readonly updates: ReadonlyArray<Acp.SessionUpdate>
  readonly text: string
}

/**
 * A connection to one ACP agent.
 *
 * - `agent`: what the agent answered to `initialize`.
 * - `newSession`: opens a session in `cwd` (default: this process's), projecting for Engram
 *   session `sessionId` (default: the agent's own session id).
 * - `prompt`: sends one prompt, the prefix (when new to the session) and the projection in front.
 *
 * @since 0.1.0
 * @category models
 */
export interface AcpConnection {
  readonly agent: Acp.InitializeResponse
  readonly newSession: (options?: {
    readonly cwd?: string | undefined
    readonly sessionId?: string | undefined
  }) => Effect.Effect<AcpSession, AcpError>
  readonly prompt: (
    session: AcpSession,
    content: string | ReadonlyArray<Acp.ContentBlock>,
    options?: AssembleOptions
  ) => Effect.Effect<PromptOutcome, AcpError | AssemblyError>
}

/**
 * The content blocks sent for a prompt, from the turn's composed request: the prefix's text (when
 * `withPrefix`, and not empty), the projection's text (unless empty), then the content as given.
 * Applied to a request `Inspect` rebuilt from a stored snapshot, it gives back the blocks sent.
 *
 * @since 0.1.0
 * @category rendering
 */
export const promptBlocks: (
  request: ModelRequest.ModelRequest,
  content: ReadonlyArray<Acp.ContentBlock>,
  withPrefix: boolean
) => ReadonlyArray<Acp.ContentBlock> = internal.promptBlocks

/**
 * The query a prompt is projected for: the text of its text blocks, joined by line breaks.
 *
 * @since 0.1.0
 * @category rendering
 */
export const queryOf: (content: ReadonlyArray<Acp.ContentBlock>) => string = internal.queryOf

/**
 * Connects to an ACP agent over a stream pair (for agents reached other than as a child process)
 * and initializes the connection.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connect: (
  stream: Acp.Stream,
  options?: ConnectOptions
) => Effect.Effect<AcpConnection, AcpError, ContextAssembler> = internal.connect

/**
 * Starts an ACP agent as a child process, connects over its standard input and output, and
 * initializes the connection. The process is stopped when the scope closes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const spawn: (
  process: AgentProcess,
  options?: ConnectOptions
) => Effect.Effect<AcpConnection, AcpError, ContextAssembler | Scope.Scope> = internal.spawn
