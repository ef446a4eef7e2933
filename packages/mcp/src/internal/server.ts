/**
 * The body of `EngramMcp`: Engram's tools and context as an MCP server on the official SDK's
 * protocol (`Server`), which answers JSON-RPC as the specification says (ids kept as sent, the
 * code in `error.code`, -32601 for an unknown method, no reply to a notification), plus the stdio
 * and streamable HTTP transports and the `Origin`/`Host` check.
 *
 * It imports only types from the public modules.
 */
import * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  InitializeRequestSchema,
  LATEST_PROTOCOL_VERSION,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SUPPORTED_PROTOCOL_VERSIONS
} from "@modelcontextprotocol/sdk/types.js"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Runtime from "effect/Runtime"
import { randomUUID, timingSafeEqual } from "node:crypto"
import * as z from "zod/v4"

/** One tool as the server lists it and calls it. */
export interface RegisteredTool {
  readonly definition: {
    readonly name: string
    readonly description: string
    readonly inputSchema: { readonly type: "object"; readonly [key: string]: unknown }
    readonly annotations: {
      readonly readOnlyHint: boolean
      readonly destructiveHint: boolean
      readonly idempotentHint: boolean
      readonly openWorldHint: boolean
    }
  }
  readonly call: (args: unknown) => Effect.Effect<CallToolResult>
}

/** One resource as the server lists it and reads it. */
export interface RegisteredResource {
  readonly uri: string
  readonly name: string
  readonly description: string
  readonly mimeType: string
  readonly read: Effect.Effect<string>
}

/** What one connection is offered once its client has introduced itself. */
export interface Connection {
  readonly tools: ReadonlyArray<RegisteredTool>
  readonly resources: ReadonlyArray<RegisteredResource>
  readonly instructions: Effect.Effect<string>
}

/** Everything a server offers: `connect` builds one connection's tools, resources and instructions. */
export interface Registry {
  readonly name: string
  readonly version: string
  readonly offersResources: boolean
  readonly connect: (client: { readonly name: string }) => Effect.Effect<Connection>
}

/** How many problems a refused tool call names before it says how many more there are. */
const MAX_ARGUMENT_PROBLEMS = 5

/**
 * Arguments the tool's schema refused, as one short sentence per problem (`kind: Expected …,
 * actual "nope"`), or `undefined` when `error` is not a refusal of the arguments. The toolkit's
 * own message carries the whole schema and the arguments, escaped: kilobytes a client cannot use.
 */
const argumentProblems = (tool: string, error: unknown): string | undefined => {
  if (
    // @effect/ai names arguments that do not decode "MalformedOutput" (they are the model's output).
    typeof error !== "object" || error === null || !("_tag" in error) || error._tag !== "MalformedOutput" ||
    !("cause" in error) || !ParseResult.isParseError(error.cause)
  ) return undefined
  // One line per argument: a union's members each report "Expected …, actual …" for the same value.
  const byPath = new Map<string, Array<string>>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error.cause)) {
    const path = issue.path.length === 0 ? "arguments" : issue.path.join(".")
    byPath.set(path, [...(byPath.get(path) ?? []), issue.message])
  }
  const problems = Array.from(byPath, ([path, messages]) => {
    const expected = messages.map((message) => /^Expected (.*), actual (.*)$/s.exec(message))
    const actuals = new Set(expected.map((match) => match?.[2]))
    return expected.every((match) => match !== null) && actuals.size === 1
      ? `${path}: Expected ${expected.map((match) => match![1]).join(" | ")}, actual ${[...actuals][0]}`
      : `${path}: ${messages.join("; ")}`
  })
  const more = problems.length > MAX_ARGUMENT_PROBLEMS ? ` (and ${problems.length - MAX_ARGUMENT_PROBLEMS} more)` : ""
  return `invalid arguments for ${tool}: ${problems.slice(0, MAX_ARGUMENT_PROBLEMS).join("; ")}${more}`
}

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

/** A default title Effect gives a refinement (`maxLength(64)`, `between(1, 200)`): internal, not a title. */
const refinementTitle = /^[A-Za-z]+\(.*\)$/

/**
 * A JSON schema as an MCP client is shown it: without the titles Effect's refinements carry by
 * default (a client shows a title as the field's name). Everything else — descriptions and the
 * constraints themselves — is kept.
 */
export const publicJsonSchema = (schema: unknown): unknown => {
  if (Array.isArray(schema)) return schema.map(publicJsonSchema)
  if (typeof schema !== "object" || schema === null) return schema
  return Object.fromEntries(
    Object.entries(schema).flatMap(([key, value]) =>
      key === "title" && typeof value === "string" && refinementTitle.test(value)
        ? []
        : [[key, publicJsonSchema(value)] as const]
    )
  )
}

const textResult = (value: unknown, isError: boolean): CallToolResult => ({
  isError,
  ...(typeof value === "object" && value !== null && !Array.isArray(value)
    ? { structuredContent: value as Record<string, unknown> }
    : {}),
  content: [{ type: "text", text: JSON.stringify(value) }]
})

// `Toolkit.handle` decodes its parameters with the tool's schema, so the JSON arguments an MCP
// client sends are what it takes at run time; its static type names the decoded form.
type HandleEncoded = (name: string, params: unknown) => Effect.Effect<Tool.HandlerResult<Tool.Any>, unknown>

/** The tools of a toolkit with handlers: each listed with the JSON schema of its parameters, decoded by them. */
export const toolsOf = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.WithHandler<Tools>
): ReadonlyArray<RegisteredTool> => {
  const handle = toolkit.handle as HandleEncoded
  return (Object.values(toolkit.tools) as ReadonlyArray<Tool.Any>).map((tool) => ({
    definition: {
      name: tool.name,
      description: tool.description ?? "",
      inputSchema: publicJsonSchema(Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast)) as RegisteredTool[
        "definition"
      ]["inputSchema"],
      annotations: {
        readOnlyHint: Context.get(tool.annotations, Tool.Readonly),
        destructiveHint: Context.get(tool.annotations, Tool.Destructive),
        idempotentHint: Context.get(tool.annotations, Tool.Idempotent),
        openWorldHint: Context.get(tool.annotations, Tool.OpenWorld)
      }
    },
    call: (args) =>
      handle(tool.name, args).pipe(
        Effect.map((result) => textResult(result.encodedResult, result.isFailure)),
        Effect.catchAllCause((cause) =>
          Effect.as(
            (Cause.isDie(cause)
              ? Effect.logError("an MCP tool call failed", cause)
              : Effect.logWarning("an MCP tool call was refused")).pipe(
                Effect.annotateLogs({ tool: tool.name, problem: describeCause(tool.name, cause) })
              ),
            textResult({ error: describeCause(tool.name, cause) }, true)
          )
        ),
        Effect.withSpan("mcp.tool", { attributes: { tool: tool.name } })
      )
  }))
}

const describeCause = (tool: string, cause: Cause.Cause<unknown>): string =>
  Option.match(Cause.failureOption(cause), {
    onSome: (error) => argumentProblems(tool, error) ?? describe(error),
    // A defect is logged, never sent: the client gets a sentence, not a stack.
    onNone: () => Cause.isInterruptedOnly(cause) ? "the tool call was interrupted" : "the tool failed unexpectedly"
  })

/**
 * A request schema that accepts any params of `method`: the SDK turns a schema mismatch in its
 * own check into an internal error (-32603), so each handler checks with {@link valid} instead.
 */
const lenient = <M extends string>(method: M) => z.object({ method: z.literal(method) }).passthrough()

/** `request` decoded by `schema`, or the JSON-RPC invalid-params error naming the problem. */
const valid = <A>(schema: { readonly safeParse: (value: unknown) => z.ZodSafeParseResult<A> }, request: unknown): A => {
  const parsed = schema.safeParse(request)
  if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `Invalid params: ${z.prettifyError(parsed.error)}`)
  return parsed.data
}

/**
 * A new SDK server for one connection. Its `initialize` is answered here, not by the SDK: the
 * connection (its session, tools and instructions) is built from the client's name first. Every
 * other request before `initialize` is refused (invalid request): nothing is recorded for a client
 * that has not said who it is.
 */
export const makeServer = (
  registry: Registry,
  runtime: Runtime.Runtime<never>
): Promise<Server> => {
  const run = Runtime.runPromise(runtime)
  const capabilities = { tools: {}, ...(registry.offersResources ? { resources: {} } : {}) }
  const server = new Server({ name: registry.name, version: registry.version }, { capabilities })
  let connection: Promise<Connection> | undefined
  const connected = (): Promise<Connection> => {
    if (connection === undefined) {
      throw new McpError(ErrorCode.InvalidRequest, "Invalid Request: initialize the connection first")
    }
    return connection
  }
  server.setRequestHandler(lenient("initialize"), async (request) => {
    const { params } = valid(InitializeRequestSchema, request)
    if (connection !== undefined) {
      throw new McpError(ErrorCode.InvalidRequest, "Invalid Request: the connection is already initialized")
    }
    // Requests after this one wait for the whole initialize, instructions included, so they are
    // answered after it.
    const opened = run(Effect.flatMap(
      registry.connect({ name: params.clientInfo.name }),
      (built) => Effect.map(built.instructions, (instructions) => ({ built, instructions }))
    ))
    connection = opened.then(({ built }) => built)
    const { instructions } = await opened
    // As the SDK's own handler answers, with the connection's instructions.
    return {
      protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(params.protocolVersion)
        ? params.protocolVersion
        : LATEST_PROTOCOL_VERSION,
      capabilities,
      serverInfo: { name: registry.name, version: registry.version },
      ...(instructions.length > 0 ? { instructions } : {})
    }
  })
  server.setRequestHandler(lenient("tools/list"), async (request) => {
    valid(ListToolsRequestSchema, request)
    const { tools } = await connected()
    return { tools: tools.map((tool) => ({ ...tool.definition })) }
  })
  // The SDK checks a tools/call request against its schema itself (invalid params, -32602).
  server.setRequestHandler(lenient("tools/call"), async (request) => {
    const { params } = valid(CallToolRequestSchema, request)
    const { tools } = await connected()
    const tool = tools.find((candidate) => candidate.definition.name === params.name)
    if (tool === undefined) {
      throw new McpError(ErrorCode.InvalidParams, `there is no tool ${params.name}`)
    }
    return run(tool.call(params.arguments ?? {}))
  })
  if (registry.offersResources) {
    server.setRequestHandler(lenient("resources/list"), async (request) => {
      valid(ListResourcesRequestSchema, request)
      const { resources } = await connected()
      return {
        resources: resources.map(({ description, mimeType, name, uri }) => ({ uri, name, description, mimeType }))
      }
    })
    server.setRequestHandler(lenient("resources/read"), async (request) => {
      const { params } = valid(ReadResourceRequestSchema, request)
      const { resources } = await connected()
      const resource = resources.find((candidate) => candidate.uri === params.uri)
      if (resource === undefined) {
        throw new McpError(ErrorCode.InvalidParams, `there is no resource ${params.uri}`)
      }
      return run(resource.read).then((text) => ({
        contents: [{ uri: resource.uri, mimeType: resource.mimeType, text }]
      }))
    })
  }
  return Promise.resolve(server)
}

// ---------------------------------------------------------------------------------------------
// Origin and Host
// ---------------------------------------------------------------------------------------------

export const LOOPBACK_HOSTS: ReadonlyArray<string> = ["localhost", "127.0.0.1", "[::1]"]

export interface OriginPolicy {
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  readonly bearerToken?: string | undefined
}

/** Whether `authorization` carries `Bearer <token>`, compared in constant time. */
const bearerMatches = (authorization: string | undefined, token: string): boolean => {
  const given = Buffer.from(/^Bearer (.+)$/i.exec(authorization ?? "")?.[1] ?? "", "utf8")
  const expected = Buffer.from(token, "utf8")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const hostnameOf = (value: string, withScheme: boolean): string | undefined => {
  try {
    return new URL(withScheme ? value : `http://${value}`).hostname.toLowerCase()
  } catch {
    return undefined
  }
}

const originOf = (value: string): string | undefined => {
  try {
    const url = new URL(value)
    return url.origin === "null" ? undefined : url.origin.toLowerCase()
  } catch {
    return undefined
  }
}

/** Why a request's `Host`/`Origin` pair is refused, or `undefined` when it is allowed. */
export const refusedBy = (
  headers: { readonly host: string | undefined; readonly origin: string | undefined },
  policy: OriginPolicy
): string | undefined => {
  const hosts = (policy.allowedHosts ?? LOOPBACK_HOSTS).map((host) => host.toLowerCase())
  if (headers.host === undefined || headers.host === "") return "the request has no Host header"
  const hostname = hostnameOf(headers.host, false)
  if (hostname === undefined || !hosts.includes(hostname)) {
    return `the Host ${JSON.stringify(headers.host)} is not allowed (allowed: ${hosts.join(", ")})`
  }
  if (headers.origin === undefined) return undefined
  const origin = originOf(headers.origin)
  const origins = (policy.allowedOrigins ?? []).map((allowed) => originOf(allowed) ?? allowed.toLowerCase())
  if (origin !== undefined) {
    if (origins.includes(origin)) return undefined
    const originHost = hostnameOf(origin, true)
    if (policy.allowedOrigins === undefined && originHost !== undefined && hosts.includes(originHost)) return undefined
  }
  return `the Origin ${JSON.stringify(headers.origin)} is not allowed` +
    (origins.length > 0 ? ` (allowed: ${origins.join(", ")})` : " (allowed: pages on the allowed hosts)")
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP
// ---------------------------------------------------------------------------------------------

export const MAX_HTTP_SESSIONS = 256

const jsonRpcError = (status: number, code: number, message: string) =>
  HttpServerResponse.unsafeJson({ jsonrpc: "2.0", id: null, error: { code, message } }, { status })

/**
 * The handler of the MCP endpoint: one SDK server and transport per MCP session (created by an
 * `initialize` without a session id, found by `Mcp-Session-Id` afterwards), the `Origin`/`Host`
 * check first. At most {@link MAX_HTTP_SESSIONS} sessions are kept; the oldest is closed to make
 * room.
 */
export const httpHandler = (registry: Registry, policy: OriginPolicy) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>()
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => Promise.all(Array.from(sessions.values(), (transport) => transport.close())))
    )

    const open = async () => {
      while (sessions.size >= MAX_HTTP_SESSIONS) {
        const [oldest, transport] = sessions.entries().next().value!
        sessions.delete(oldest)
        await transport.close()
      }
      const server = await makeServer(registry, runtime)
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          sessions.set(id, transport)
        },
        onsessionclosed: (id) => {
          sessions.delete(id)
        }
      })
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
      }
      await server.connect(transport)
      return transport
    }

    return Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const refused = refusedBy({ host: request.headers["host"], origin: request.headers["origin"] }, policy)
      if (refused !== undefined) {
        yield* Effect.logWarning("an MCP request was refused").pipe(Effect.annotateLogs({ problem: refused }))
        return jsonRpcError(403, ErrorCode.InvalidRequest, `Forbidden: ${refused}`)
      }
      if (policy.bearerToken !== undefined && !bearerMatches(request.headers["authorization"], policy.bearerToken)) {
        return jsonRpcError(401, ErrorCode.InvalidRequest, "Unauthorized: send Authorization: Bearer <token>")
          .pipe(HttpServerResponse.setHeader("www-authenticate", "Bearer"))
      }
      const sessionId = request.headers["mcp-session-id"]
      const known = sessionId === undefined ? undefined : sessions.get(sessionId)
      if (sessionId !== undefined && known === undefined) {
        return jsonRpcError(404, -32001, `Session not found: ${sessionId}`)
      }
      // Outside a session only POST means anything (an initialize); GET opens a stream of a
      // session, DELETE ends one. A request with no session names the method it may use.
      if (known === undefined && request.method !== "POST") {
        return jsonRpcError(
          405,
          ErrorCode.InvalidRequest,
          `Method Not Allowed: ${request.method} needs an Mcp-Session-Id; initialize with POST first`
        ).pipe(HttpServerResponse.setHeader("allow", "POST"))
      }
      const web = yield* HttpServerRequest.toWeb(request)
      const response = yield* Effect.promise(async () => {
        if (known !== undefined) return known.handleRequest(web)
        const transport = await open()
        const answered = await transport.handleRequest(web)
        // A first request that did not initialize a session leaves an unused transport behind.
        if (transport.sessionId === undefined) await transport.close()
        return answered
      })
      return HttpServerResponse.fromWeb(response)
    }).pipe(
      Effect.catchTag("RequestError", (error) =>
        Effect.succeed(jsonRpcError(400, ErrorCode.InvalidRequest, `Bad Request: ${error.message}`)))
    )
  })
