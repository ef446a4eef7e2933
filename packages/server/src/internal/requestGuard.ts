/**
 * The server's door: what every request meets before a route sees it, and every answer on its way
 * out. A body must be JSON (else 415), declare its length (else 411), be at most `maxBodyBytes`
 * long (else 413), nest at most `maxJsonDepth` deep (else 400) and parse (else 400); a refusal is
 * a JSON body naming the problem and the limit. On the way out, every 4xx/5xx carries a JSON body (a route the router
 * does not know answers 404 with one), long strings in an error body are cut (a decode error
 * otherwise echoes the whole value it refused), a 503 carries `Retry-After`, and every answer
 * carries the security headers.
 */
import * as HttpApp from "@effect/platform/HttpApp"
import * as HttpIncomingMessage from "@effect/platform/HttpIncomingMessage"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Sha256 } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

/** The limits the door enforces (see `EngramServer.RequestLimits`). */
export interface Limits {
  readonly maxBodyBytes: number
  readonly maxJsonDepth: number
}

/** How long a string in an error body may be before it is cut. */
const MAX_ERROR_STRING = 500

const refuse = (status: number, tag: string, message: string) =>
  HttpServerResponse.unsafeJson({ _tag: tag, message }, { status })

const mediaType = (header: string): string => header.split(";")[0]!.trim().toLowerCase()

/**
 * How deep `text` nests arrays and objects, stopping as soon as it passes `max` (a linear scan
 * that needs no stack, so a body nested 100,000 deep costs its length and nothing more).
 */
export const nestingOver = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c /* \ */) i++
      else if (c === 0x22 /* " */) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (++depth > max) return true
    } else if (c === 0x5d /* ] */ || c === 0x7d /* } */) depth--
  }
  return false
}

const hasBody = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const length = request.headers["content-length"]
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length.trim() !== "0")
}

/** The refusal a request's body earns, if any; reading it leaves the text cached for the route. */
const checkBody = (
  request: HttpServerRequest.HttpServerRequest,
  limits: Limits
): Effect.Effect<Option.Option<HttpServerResponse.HttpServerResponse>> => {
  if (request.method === "GET" || request.method === "HEAD" || request.method === "OPTIONS") return Effect.succeedNone
  const contentType = request.headers["content-type"]
  // Checked with or without a body: the platform reads a declared multipart body even when none
  // came. No content type is read as JSON, as the API's decoder does.
  if (contentType !== undefined && mediaType(contentType) !== "application/json") {
    return Effect.succeedSome(
      refuse(
        415,
        "UnsupportedMediaType",
        `the request body is ${JSON.stringify(mediaType(contentType).slice(0, 100))}; this API takes application/json`
      )
    )
  }
  const tooLarge = (size: string) =>
    refuse(
      413,
      "PayloadTooLarge",
      `the request body is ${size}, over the limit of ${limits.maxBodyBytes} bytes (RequestLimits.maxBodyBytes)`
    )
  if (!hasBody(request)) return Effect.succeedNone
  // A body with no declared length could only be measured by reading it past the limit, and the
  // platform then drops the connection instead of answering: such a body is refused unread.
  if (request.headers["content-length"] === undefined) {
    return Effect.succeedSome(
      refuse(
        411,
        "LengthRequired",
        "the request body has no Content-Length; send it with one (chunked bodies are refused)"
      )
    )
  }
  const declared = Number(request.headers["content-length"])
  if (Number.isFinite(declared) && declared > limits.maxBodyBytes) {
    return Effect.succeedSome(tooLarge(`${declared} bytes`))
  }
  return request.text.pipe(
    HttpIncomingMessage.withMaxBodySize(Option.some(limits.maxBodyBytes)),
    Effect.map((text) => {
      if (text === "") return Option.none()
      if (nestingOver(text, limits.maxJsonDepth)) {
        return Option.some(
          refuse(
            400,
            "BadRequest",
            `the request body nests deeper than ${limits.maxJsonDepth} levels (RequestLimits.maxJsonDepth)`
          )
        )
      }
      try {
        JSON.parse(text)
        return Option.none()
      } catch (error) {
        const reason = error instanceof Error ? error.message.slice(0, 200) : "it does not parse"
        return Option.some(refuse(400, "BadRequest", `the request body is not valid JSON: ${reason}`))
      }
    }),
    // The body could not be read whole: the client cut it off (its length is checked above).
    Effect.catchAll(() => Effect.succeedSome(refuse(400, "BadRequest", "the request body could not be read whole")))
  )
}

const cut = (value: unknown): unknown => {
  if (typeof value === "string") {
    return value.length > MAX_ERROR_STRING
      ? `${value.slice(0, MAX_ERROR_STRING)}… (${value.length - MAX_ERROR_STRING} more characters cut)`
      : value
  }
  if (Array.isArray(value)) return value.slice(0, 20).map(cut)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, cut(inner)]))
  }
  return value
}

const statusTags: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  411: "LengthRequired",
  413: "PayloadTooLarge",
  415: "UnsupportedMediaType",
  503: "Unavailable",
  507: "InsufficientStorage"
}

/** An error answer with a JSON body naming the problem, its strings bounded. */
const errorBody = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse => {
  const { body, status } = response
  if (body._tag === "Empty") {
    const message = status === 404
      ? `no route answers ${request.method} ${request.url.split("?")[0]!.slice(0, 200)}`
      : status >= 500
      ? "the server failed on this request; its log has the cause"
      : "the request was refused"
    return HttpServerResponse.unsafeJson({
      _tag: statusTags[status] ?? (status >= 500 ? "ServerError" : "Refused"),
      message
    }, {
      status,
      headers: response.headers
    })
  }
  if (body._tag === "Uint8Array" && body.contentType.startsWith("application/json") && body.contentLength > 2_000) {
    try {
      const json: unknown = JSON.parse(new TextDecoder().decode(body.body))
      return HttpServerResponse.unsafeJson(cut(json), { status, headers: response.headers })
    } catch {
      return response
    }
  }
  return response
}

// Hashes of the inline scripts of an HTML page, by page text (the pages served are constants).
const scriptHashes = new Map<string, string>()
const inlineScript = /<script(?![^>]*\b(?:type="application\/json"|src=))[^>]*>([\s\S]*?)<\/script>/g

const hashesOf = (html: string): string => {
  const known = scriptHashes.get(html)
  if (known !== undefined) return known
  const hashes = [...html.matchAll(inlineScript)]
    .map((match) => `'sha256-${Buffer.from(Sha256.hex(match[1]!), "hex").toString("base64")}'`)
    .join(" ")
  if (scriptHashes.size < 16) scriptHashes.set(html, hashes)
  return hashes
}

/** Whether a page styles itself inline (a `<style>` element or a `style` attribute). */
const inlineStyle = /<style[\s>]|\sstyle=/i

/**
 * The content security policy of an answer: none at all for data; for a page, scripts and styles
 * from this origin only, plus the hashes of the page's own inline scripts (Swagger UI has some;
 * the console has none) and inline styles only for a page that has them.
 */
const policyOf = (response: HttpServerResponse.HttpServerResponse): string => {
  const { body } = response
  if (body._tag === "Uint8Array" && body.contentType.startsWith("text/html")) {
    const html = new TextDecoder().decode(body.body)
    const scripts = hashesOf(html)
    return [
      "default-src 'none'",
      `script-src 'self'${scripts.length > 0 ? ` ${scripts}` : ""}`,
      `style-src 'self'${inlineStyle.test(html) ? " 'unsafe-inline'" : ""}`,
      "img-src 'self' data:",
      "font-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'"
    ].join("; ")
  }
  return "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
}

/**
 * The seconds a 503 asks a client to wait before retrying (`Retry-After`): long enough for a
 * database restart or failover to be noticed, short enough that clients resume soon after.
 */
export const RETRY_AFTER_SECONDS = 5

const secured = (
  request: HttpServerRequest.HttpServerRequest,
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse => {
  const answer = response.status >= 400 ? errorBody(request, response) : response
  return HttpServerResponse.setHeaders(answer, {
    ...(response.status === 503 && response.headers["retry-after"] === undefined
      ? { "retry-after": String(RETRY_AFTER_SECONDS) }
      : {}),
    "content-security-policy": policyOf(answer),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
    ...(request.url.startsWith("/api") ? { "cache-control": "no-store" } : {})
  })
}

/**
 * Wraps the whole app (API, OpenAPI document, Swagger UI, console) in the door. The app sends its
 * own answer (the platform's error handling included), so the outgoing half is a pre-response
 * handler, which runs on every answer the app sends; a refusal at the door is secured here.
 */
export const guard = (limits: Limits) => (app: HttpApp.Default): HttpApp.Default =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const refusal = yield* checkBody(request, limits)
    if (Option.isSome(refusal)) return secured(request, refusal.value)
    yield* HttpApp.appendPreResponseHandler((request, response) => Effect.succeed(secured(request, response)))
    return yield* app
  })
