/**
 * The body of `AcpClient`: the ACP client side over `@agentclientprotocol/sdk`, and the child
 * process an agent runs in.
 */
import * as Acp from "@agentclientprotocol/sdk"
import { ErrorClass } from "@engram/core"
import { PromptFragment } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { spawn as spawnChild } from "node:child_process"
import { Readable, Writable } from "node:stream"
import type { AcpConnection, AgentProcess, ConnectOptions } from "../AcpClient.js"
import { ContextAssembler } from "../ContextAssembler.js"
import type * as ModelRequest from "../ModelRequest.js"

export class AcpError extends ErrorClass.TaggedError<AcpError>()("AcpError", {
  operation: Schema.String,
  cause: Schema.Defect,
  stderr: Schema.optional(Schema.String)
}, {
  errorClass: "Unavailable",
  message: (self) => {
    const cause = self.cause
    const detail = cause instanceof Error
      ? cause.message
      : typeof cause === "object" && cause !== null && "message" in cause
      ? String(cause.message)
      : String(cause)
    const tail = self.stderr?.trim() ?? ""
    const stderr = tail === "" ? "" : ` (agent stderr: ${tail})`
    return `ACP ${self.operation} failed: ${detail}${stderr}`
  }
}) {}

/** How much of the agent's standard error is kept for error messages. */
const STDERR_TAIL = 4_000
/** How long a stopped agent gets to exit before it is killed. */
const STOP_GRACE_MS = 2_000

const textOf = (request: ModelRequest.ModelRequest, source: ModelRequest.FragmentSource): string =>
  request.fragments.flatMap((fragment) => (fragment.source === source ? [fragment.text] : [])).join("")

export const promptBlocks = (
  request: ModelRequest.ModelRequest,
  content: ReadonlyArray<Acp.ContentBlock>,
  withPrefix: boolean
): ReadonlyArray<Acp.ContentBlock> => {
  const prefix = withPrefix ? textOf(request, "prefix") : ""
  const projection = textOf(request, "projection")
  return [
    ...(prefix !== "" ? [{ type: "text" as const, text: prefix }] : []),
    ...(projection !== "" ? [{ type: "text" as const, text: projection }] : []),
    ...content
  ]
}

export const queryOf = (content: ReadonlyArray<Acp.ContentBlock>): string =>
  content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")

/**
 * Refuses MCP servers over a transport the agent did not advertise in `initialize` (stdio is
 * always supported), before `session/new`: the agent would fail the session less clearly.
 */
const unsupportedTransports = (agent: Acp.InitializeResponse, servers: ReadonlyArray<Acp.McpServer>) => {
  const capabilities = agent.agentCapabilities?.mcpCapabilities ?? {}
  const refused = servers.flatMap((server) =>
    "type" in server && capabilities[server.type] !== true ? [`${server.name} (${server.type})`] : []
  )
  return refused.length === 0
    ? Effect.void
    : Effect.fail(
      new AcpError({
        operation: "session/new",
        cause: new Error(
          `the agent does not accept MCP servers over these transports: ${refused.join(", ")}; ` +
            `give them over stdio instead`
        )
      })
    )
}

/** What a connection knows about the process behind it, if there is one. */
interface Peer {
  /** Rejects when the process fails or exits, so no request waits on a dead agent. */
  readonly gone: Promise<never>
  readonly stderr: () => string
}

const connectWith = (
  stream: Acp.Stream,
  options: ConnectOptions,
  peer: Peer | undefined
): Effect.Effect<AcpConnection, AcpError, ContextAssembler> =>
  Effect.gen(function*() {
    const assembler = yield* ContextAssembler
    const updates = new Map<string, Array<Acp.SessionUpdate>>()
    const client: Acp.Client = {
      requestPermission: (request) =>
        options.requestPermission !== undefined
          ? options.requestPermission(request)
          : Promise.resolve({ outcome: { outcome: "cancelled" } }),
      sessionUpdate: (notification) => {
        updates.get(notification.sessionId)?.push(notification.update)
      }
    }
    const connection = new Acp.ClientSideConnection(() => client, stream)
    const call = <A>(operation: string, request: () => Promise<A>): Effect.Effect<A, AcpError> =>
      Effect.tryPromise({
        try: () => (peer === undefined ? request() : Promise.race([request(), peer.gone])),
        catch: (cause) => {
          const stderr = peer?.stderr()
          return new AcpError({ operation, cause, ...(stderr !== undefined && stderr !== "" ? { stderr } : {}) })
        }
      })

    const agent = yield* call("initialize", () =>
      connection.initialize({
        protocolVersion: Acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: options.clientInfo ?? { name: "engram", version: "0.1.0" }
      }))

    const mcpServers = options.mcpServers ?? []
    // The prefix each ACP session last received.
    const prefixes = new Map<string, string>()
    const result: AcpConnection = {
      agent,
      newSession: (sessionOptions = {}) =>
        Effect.map(
          Effect.zipRight(
            unsupportedTransports(agent, mcpServers),
            call(
              "session/new",
              () => connection.newSession({ cwd: sessionOptions.cwd ?? process.cwd(), mcpServers: [...mcpServers] })
            )
          ),
          (response) => ({
            acpSessionId: response.sessionId,
            engramSessionId: sessionOptions.sessionId ?? response.sessionId
          })
        ),
      prompt: (session, content, assembleOptions) =>
        Effect.gen(function*() {
          const blocks: ReadonlyArray<Acp.ContentBlock> = typeof content === "string"
            ? [{ type: "text", text: content }]
            : content
          const { prefix, projection, request } = yield* assembler.compose(
            session.engramSessionId,
            queryOf(blocks),
            assembleOptions
          )
          const prefixText = PromptFragment.joinPrompt(prefix)
          const fresh = prefixText !== "" && prefixes.get(session.acpSessionId) !== prefixText
          const sent = promptBlocks(request, blocks, fresh)
          const streamed: Array<Acp.SessionUpdate> = []
          updates.set(session.acpSessionId, streamed)
          const response = yield* call(
            "session/prompt",
            () => connection.prompt({ sessionId: session.acpSessionId, prompt: [...sent] })
          ).pipe(
            Effect.tap(() => Effect.sync(() => fresh && prefixes.set(session.acpSessionId, prefixText))),
            Effect.onInterrupt(() =>
              Effect.ignore(call("session/cancel", () => connection.cancel({ sessionId: session.acpSessionId })))
            ),
            Effect.ensuring(Effect.sync(() => updates.delete(session.acpSessionId)))
          )
          const text = streamed.flatMap((update) =>
            update.sessionUpdate === "agent_message_chunk" && update.content.type === "text"
              ? [update.content.text]
              : []
          ).join("")
          yield* assembler.answered(session.engramSessionId, text)
          return { stopReason: response.stopReason, request, projection, sent, updates: streamed, text }
        }).pipe(
          Effect.withSpan("engram.acp.prompt", {
            attributes: { acpSessionId: session.acpSessionId, sessionId: session.engramSessionId }
          })
        )
    }
    return result
  })

export const connect = (
  stream: Acp.Stream,
  options: ConnectOptions = {}
): Effect.Effect<AcpConnection, AcpError, ContextAssembler> => connectWith(stream, options, undefined)

export const spawn = (
  agentProcess: AgentProcess,
  options: ConnectOptions = {}
): Effect.Effect<AcpConnection, AcpError, ContextAssembler | Scope.Scope> =>
  Effect.gen(function*() {
    const child = yield* Effect.acquireRelease(
      Effect.try({
        try: () =>
          spawnChild(agentProcess.command, [...(agentProcess.args ?? [])], {
            cwd: agentProcess.cwd,
            env: { ...process.env, ...agentProcess.env },
            stdio: ["pipe", "pipe", "pipe"]
          }),
        catch: (cause) => new AcpError({ operation: "spawn", cause })
      }),
      (child) =>
        Effect.async<void>((resume) => {
          if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
          const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS)
          child.once("exit", () => {
            clearTimeout(timer)
            resume(Effect.void)
          })
          child.stdin.end()
          child.kill("SIGTERM")
        })
    )
    let stderr = ""
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL)
    })
    const gone = new Promise<never>((_, reject) => {
      child.once("error", reject)
      child.once("exit", (code, signal) =>
        reject(new Error(`the agent process exited (${signal !== null ? `signal ${signal}` : `code ${code}`})`)))
    })
    // Requests race this promise; it must never count as unhandled when nothing is waiting on it.
    gone.catch(() =>
      undefined
    )
    // A write to an agent that has gone away surfaces through `gone`, not as an unhandled error.
    child.stdin.on("error", () => undefined)
    const stream = Acp.ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>
    )
    return yield* connectWith(stream, options, { gone, stderr: () => stderr })
  })
