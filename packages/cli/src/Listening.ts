/**
 * How `engram serve` and `engram mcp --http` say where they are: one line on stdout once the port
 * is bound (with `--json`, one JSON line), naming the URL, the port actually bound (`--port 0`
 * picks one) and the store; and a server that cannot listen fails with one line naming the address
 * and why (the port is in use, the host is not an address of this machine, …).
 *
 * @since 0.1.0
 */
import * as HttpServer from "@effect/platform/HttpServer"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import { CliFailure, ExitCode } from "./CliError.js"

/**
 * What the ready line reports: the command, the path served under the URL, and the store.
 *
 * @since 0.1.0
 * @category models
 */
export interface Ready {
  readonly command: "serve" | "mcp"
  /** The path appended to the server's origin: `/` for serve, `/mcp` for mcp. */
  readonly path: string
  /** The store, as `StoreBackend.describeLocation` writes it. */
  readonly store: string
  /** Print a JSON line instead of the sentence. */
  readonly json: boolean
  /** More to say after the URL, in the human line (e.g. where the API and docs are). */
  readonly detail?: string | undefined
}

/**
 * The origin of a bound address: `http://host:port`, IPv6 hosts in brackets.
 *
 * @since 0.1.0
 * @category formatting
 */
export const origin = (address: HttpServer.TcpAddress): string =>
  `http://${address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname}:${address.port}`

/**
 * The ready line: `engram serve: listening on http://127.0.0.1:8787/ (…; store …)`, or with `json`
 * `{"ready":true,"command":"serve","url":…,"host":…,"port":…,"store":…}`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const readyLine = (ready: Ready, address: HttpServer.TcpAddress): string => {
  const url = `${origin(address)}${ready.path}`
  return ready.json
    ? JSON.stringify({
      ready: true,
      command: ready.command,
      url,
      host: address.hostname,
      port: address.port,
      store: ready.store
    })
    : `engram ${ready.command}: listening on ${url}${ready.detail === undefined ? "" : ` (${ready.detail})`}; ` +
      `store ${ready.store}`
}

/**
 * A layer that prints the ready line once the `HttpServer` it is given is bound, and stops the
 * server when the process that started it is gone (see `stopWhenOrphaned`). Provide it with
 * the server's layer *merged* (`Layer.provideMerge`), so it is built after the server.
 *
 * @since 0.1.0
 * @category layers
 */
export const announce = (ready: Ready): Layer.Layer<never, never, HttpServer.HttpServer> =>
  Layer.scopedDiscard(
    Effect.zipRight(
      Effect.flatMap(HttpServer.HttpServer, (server) =>
        server.address._tag === "TcpAddress"
          ? Console.log(readyLine(ready, server.address))
          : Console.log(
            ready.json
              ? JSON.stringify({ ready: true, command: ready.command, path: server.address.path, store: ready.store })
              : `engram ${ready.command}: listening on ${server.address.path}; store ${ready.store}`
          )),
      stopWhenOrphaned
    )
  )

/**
 * Stops the server (as SIGTERM does) once the process that started it is gone. `npx engram serve`
 * runs the server under `npm exec` and a shell: a SIGTERM to npx ends npm and the shell, and the
 * server, re-parented, would serve on with no one to stop it. Checked once a second.
 */
const stopWhenOrphaned = Effect.suspend(() => {
  const parent = process.ppid
  return Effect.sync(() => process.ppid).pipe(
    Effect.repeat({ schedule: Schedule.spaced("1 second"), while: (now) => now === parent }),
    Effect.zipRight(Effect.logInfo("the process that started engram is gone; stopping")),
    Effect.zipRight(Effect.sync(() => process.kill(process.pid, "SIGTERM"))),
    Effect.forkScoped,
    Effect.asVoid
  )
})

const codeOf = (cause: unknown): string | undefined =>
  Predicate.hasProperty(cause, "code") && typeof cause.code === "string" ? cause.code : undefined

/**
 * Why a server could not listen on `host:port`, as the one line the command fails with: the
 * address, the reason in words and the system's code, and what to do.
 *
 * @since 0.1.0
 * @category errors
 */
export const describeListenError = (
  error: HttpServerError.ServeError,
  where: { readonly host: string; readonly port: number; readonly portFlag: string; readonly hostFlag: string }
): CliFailure => {
  const code = codeOf(error.cause)
  const at = `${where.host.includes(":") ? `[${where.host}]` : where.host}:${where.port}`
  const reason = code === "EADDRINUSE"
    ? `the port is in use; pick another with ${where.portFlag} (0 picks a free one)`
    : code === "EACCES"
    ? `permission denied (ports below 1024 need privileges); pick another with ${where.portFlag}`
    : code === "EADDRNOTAVAIL" || code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME"
    ? `${where.host} is not an address of this machine; give ${where.hostFlag} 127.0.0.1, 0.0.0.0 or one of its addresses`
    : Predicate.hasProperty(error.cause, "message") && typeof error.cause.message === "string"
    ? error.cause.message
    : String(error.cause)
  return new CliFailure({
    problem: `cannot listen on ${at}: ${reason}${code === undefined ? "" : ` (${code})`}`,
    exitCode: ExitCode.refused
  })
}

/**
 * A server layer that fails, when it cannot listen, with {@link describeListenError}'s one line.
 *
 * @since 0.1.0
 * @category layers
 */
export const refuseListenErrors = (
  where: { readonly host: string; readonly port: number; readonly portFlag: string; readonly hostFlag: string }
) =>
<A, E, R>(self: Layer.Layer<A, E | HttpServerError.ServeError, R>): Layer.Layer<A, E | CliFailure, R> =>
  Layer.catchAll(
    self,
    (error): Layer.Layer<unknown, E | CliFailure> =>
      isServeError(error) ? Layer.fail(describeListenError(error, where)) : Layer.fail(error)
  )

const isServeError = <E>(error: E | HttpServerError.ServeError): error is HttpServerError.ServeError =>
  Predicate.isTagged(error, "ServeError")
