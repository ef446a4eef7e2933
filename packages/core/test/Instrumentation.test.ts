/**
 * `Instrumentation.instrument`: every Effect-returning method gets its span and keeps its result;
 * plain values and non-Effect methods pass through; methods of a class instance are wrapped too.
 */
import { describe, expect, it } from "@effect/vitest"
import { Instrumentation } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

class Counter {
  readonly flag = true
  constructor(private n: number) {}
  next() {
    return Effect.flatMap(Effect.currentSpan, (span) => Effect.succeed({ value: ++this.n, span: span.name }))
  }
  peek() {
    return this.n
  }
}

describe("Instrumentation.instrument", () => {
  it.effect("wraps object and class methods in engram.<service>.<method> spans, keeping results and this", () =>
    Effect.gen(function*() {
      const plain = Instrumentation.instrument("Plain", {
        list: () =>
          Effect.map(
            Effect.option(Effect.currentSpan),
            (span) => ({ rows: [1, 2], span: Option.map(span, (s) => s.name) })
          ),
        size: 3
      })
      expect(plain.size).toBe(3)
      expect(yield* plain.list()).toEqual({ rows: [1, 2], span: Option.some("engram.Plain.list") })
      const counter = Instrumentation.instrument("Counter", new Counter(1))
      expect(counter.flag).toBe(true)
      expect(yield* counter.next()).toEqual({ value: 2, span: "engram.Counter.next" })
      expect(counter.peek()).toBe(2)
    }))
})
