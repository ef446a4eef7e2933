/**
 * Request spans only when something records them (decision 0214): under Effect's built-in tracer a
 * request runs with tracing off; with a tracer installed (as OpenTelemetry's `NodeSdk.layer`
 * installs one) the request is traced, its HTTP span recorded.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, PromotionStore, SessionStore, StoreTransaction, TelemetryStore } from "@engram/core"
import { AccessTokens, EngramServer } from "@engram/server"
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"

/**
 * Serves the server (with `tracer` installed, if given) over in-memory stores whose token check
 * notes whether tracing is on in the request it runs in, then writes one memory through HTTP.
 */
const writeOnce = (tracer?: Tracer.Tracer) =>
  Effect.gen(function*() {
    const tracingSeen: Array<boolean> = []
    const tokens = Layer.effect(
      AccessTokens.AccessTokens,
      Effect.map(AccessTokens.AccessTokens, (inner) => ({
        ...inner,
        verify: (secret: string) =>
          Effect.zipRight(
            Effect.flatMap(
              FiberRef.get(FiberRef.currentTracerEnabled),
              (on) => Effect.sync(() => tracingSeen.push(on))
            ),
            inner.verify(secret)
          )
      }))
    ).pipe(Layer.provide(AccessTokens.layerMemory))
    const stores = MemoryStore.layerMemoryCascading.pipe(
      Layer.provideMerge(Layer.mergeAll(
        PromotionStore.layerMemory,
        SessionStore.layerMemory,
        TelemetryStore.layerMemory,
        StoreTransaction.layerNone,
        tokens
      ))
    )
    const served = EngramServer.layerServe({ port: 0 }).pipe(Layer.provideMerge(stores))
    const context = yield* Layer.build(tracer === undefined ? served : Layer.provide(served, Layer.setTracer(tracer)))
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
    const { secret } = yield* Effect.orDie(
      Context.get(context, AccessTokens.AccessTokens).create({ label: "t", scopes: ["global"], readOnly: false })
    )
    const status = yield* Effect.promise(() =>
      fetch(`http://127.0.0.1:${address.port}/api/memories`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ content: "the deploy runs on fridays", kind: "note" })
      }).then((response) => response.status)
    )
    return { status, tracingSeen }
  })

describe("request tracing", () => {
  it.scoped("is off under Effect's built-in tracer, which records nothing", () =>
    Effect.gen(function*() {
      const { status, tracingSeen } = yield* writeOnce()
      expect(status).toBe(201)
      expect(tracingSeen).toEqual([false])
    }))

  it.scoped("is on with a tracer installed, and the request's HTTP span is recorded", () =>
    Effect.gen(function*() {
      const builtIn = Context.get(DefaultServices.liveServices, Tracer.Tracer)
      const recorded: Array<string> = []
      const recording = Tracer.make({
        span: (name, ...rest) => {
          recorded.push(name)
          return builtIn.span(name, ...rest)
        },
        context: builtIn.context
      })
      const { status, tracingSeen } = yield* writeOnce(recording)
      expect(status).toBe(201)
      expect(tracingSeen).toEqual([true])
      expect(recorded).toContain("http.server POST")
    }))
})
