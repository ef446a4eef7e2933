/**
 * Spans only when something records them (decision 0214). Effect's built-in tracer keeps a span in
 * memory for as long as its fiber runs and sends it nowhere, yet every request paid for its spans:
 * the platform's HTTP span (the URL parsed, the headers redacted and copied into attributes) and
 * one span per SQL statement. Under the built-in tracer the server turns tracing off for its
 * requests; with any other tracer installed (OpenTelemetry's `NodeSdk.layer`, or a test's own),
 * every span is recorded as before.
 */
import * as Context from "effect/Context"
import * as DefaultServices from "effect/DefaultServices"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"

/** The tracer every Effect program has when none is installed: it records nothing anyone reads. */
const builtInTracer = Context.get(DefaultServices.liveServices, Tracer.Tracer)

/**
 * `server` with tracing off when the tracer in place as it is built is Effect's built-in one (its
 * request fibers inherit that), and unchanged under any other tracer.
 */
export const onlyWhenRecorded = <A, E, R>(server: Layer.Layer<A, E, R>): Layer.Layer<A, E, R> =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.tracer,
      (tracer) => tracer === builtInTracer ? Layer.provide(server, Layer.setTracerEnabled(false)) : server
    )
  )
