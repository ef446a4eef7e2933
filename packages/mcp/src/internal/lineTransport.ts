/**
 * The stdio transport: newline-delimited JSON-RPC on a readable and a writable stream, as the MCP
 * stdio transport specifies — and a line that is not a message never stops it.
 *
 * Every line is judged alone. A line that is not JSON (an empty line, garbage, a NUL byte, a line
 * over {@link MAX_LINE_BYTES}) is answered with the JSON-RPC parse error (-32700, `id: null` — for
 * an over-size line, its request's id when the line's start names one); JSON
 * that is not a JSON-RPC message is answered with invalid request (-32600, with the line's `id`
 * when it has a usable one, else `null`); a batch (MCP 2025-06-18 has none) likewise. Nothing else
 * is written for it and the next line is read as usual. An `initialize` whose params do not decode
 * is answered with invalid params (-32602) here, since the SDK would call it an internal error.
 * Well-formed messages go to the SDK's protocol, which answers unknown methods with -32601 and
 * never replies to a notification.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import {
  ErrorCode,
  InitializeRequestSchema,
  type JSONRPCMessage,
  JSONRPCMessageSchema
} from "@modelcontextprotocol/sdk/types.js"
import type { Readable, Writable } from "node:stream"

export const MAX_LINE_BYTES = 4 * 1024 * 1024

const NEWLINE = 0x0a

const errorLine = (id: string | number | null, code: number, message: string): string =>
  JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }) + "\n"

/** The reply to a line the server answers itself with a JSON-RPC error. */
const errorReply = (id: string | number | null, code: number, message: string) =>
  ({ _tag: "Reply", line: errorLine(id, code, message) }) as const

/** How much of an over-size line is kept to read its id from. */
const HEAD_BYTES = 4096

/**
 * The id of a request whose line is too long to parse, read from its start: the members before
 * `id` may be only `jsonrpc` and `method` (strings), as clients write them; else `null`.
 */
export const idOfHead = (head: string): string | number | null => {
  const match =
    /^\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*)*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)\s*[,}]/
      .exec(head)
  if (match === null) return null
  const id: unknown = JSON.parse(match[1]!)
  return typeof id === "string" || (typeof id === "number" && Number.isSafeInteger(id)) ? id : null
}

const usableId = (value: unknown): string | number | null => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null
  const id = (value as { readonly id?: unknown }).id
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null
}

/** What one line is: a message for the protocol, or the error line to answer it with. */
export const judgeLine = (
  line: string
): { readonly _tag: "Message"; readonly message: JSONRPCMessage } | {
  readonly _tag: "Reply"
  readonly line: string
} => {
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch (error) {
    const problem = line.trim() === "" ? "the line is empty" : error instanceof Error ? error.message : String(error)
    return errorReply(null, ErrorCode.ParseError, `Parse error: ${problem}`)
  }
  if (Array.isArray(value)) {
    return errorReply(null, ErrorCode.InvalidRequest, "Invalid Request: batches are not supported (MCP 2025-06-18)")
  }
  const parsed = JSONRPCMessageSchema.safeParse(value)
  if (!parsed.success) {
    return errorReply(
      usableId(value),
      ErrorCode.InvalidRequest,
      "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
    )
  }
  const message = parsed.data as JSONRPCMessage
  // The SDK answers an initialize it cannot decode with an internal error; it is invalid params.
  if ("method" in message && message.method === "initialize" && "id" in message) {
    const initialize = InitializeRequestSchema.safeParse(message)
    if (!initialize.success) {
      return errorReply(
        usableId(message),
        ErrorCode.InvalidParams,
        "Invalid params: initialize takes protocolVersion (a string), capabilities and clientInfo (objects)"
      )
    }
  }
  return { _tag: "Message", message }
}

export class LineTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: ((message: JSONRPCMessage) => void) | undefined

  private chunks: Array<Buffer> = []
  private buffered = 0
  // Past MAX_LINE_BYTES the rest of the line is skipped up to its newline, then answered.
  private skipping = false
  // The start of a skipped line, where its request id usually is (`{"jsonrpc":"2.0","id":7,…`).
  private head = ""
  private closed = false

  constructor(private readonly input: Readable, private readonly output: Writable) {}

  private readonly onData = (chunk: Buffer | string) => {
    let data = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk
    while (data.length > 0) {
      const newline = data.indexOf(NEWLINE)
      if (newline === -1) {
        this.keep(data)
        return
      }
      this.keep(data.subarray(0, newline))
      data = data.subarray(newline + 1)
      this.endLine()
    }
  }

  private keep(part: Buffer) {
    if (this.skipping || part.length === 0) return
    if (this.buffered + part.length > MAX_LINE_BYTES) {
      this.skipping = true
      this.head = Buffer.concat([...this.chunks, part.subarray(0, HEAD_BYTES)]).subarray(0, HEAD_BYTES).toString("utf8")
      this.chunks = []
      this.buffered = 0
      return
    }
    this.chunks.push(part)
    this.buffered += part.length
  }

  private endLine() {
    if (this.skipping) {
      this.skipping = false
      // Answered with the request's id when its start names one, so a client does not wait for a timeout.
      this.write(
        errorLine(idOfHead(this.head), ErrorCode.ParseError, `Parse error: the line is over ${MAX_LINE_BYTES} bytes`)
      )
      this.head = ""
      return
    }
    const line = Buffer.concat(this.chunks, this.buffered).toString("utf8").replace(/\r$/, "")
    this.chunks = []
    this.buffered = 0
    const judged = judgeLine(line)
    if (judged._tag === "Reply") {
      this.write(judged.line)
      return
    }
    try {
      this.onmessage?.(judged.message)
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)))
    }
  }

  private readonly onEnd = () => {
    void this.close()
  }

  private readonly onStreamError = (error: Error) => {
    this.onerror?.(error)
  }

  private write(text: string): Promise<void> {
    if (this.closed) return Promise.resolve()
    return new Promise((resolve) => {
      if (this.output.write(text)) resolve()
      else this.output.once("drain", () => resolve())
    })
  }

  start(): Promise<void> {
    this.input.on("data", this.onData)
    this.input.on("end", this.onEnd)
    this.input.on("error", this.onStreamError)
    return Promise.resolve()
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(JSON.stringify(message) + "\n")
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve()
    this.closed = true
    this.input.off("data", this.onData)
    this.input.off("end", this.onEnd)
    this.input.off("error", this.onStreamError)
    this.onclose?.()
    return Promise.resolve()
  }
}
