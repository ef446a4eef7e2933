import { describe, expect, it } from "@effect/vitest"
import { Routing, RoutingPresets, RoutingSpecs } from "@engram/core"
import { Effect, Either } from "effect"

const custom: Routing.MemoryRoutingSpec = {
  key: "companion",
  version: "2",
  route: () => null,
  finalize: Routing.finalizeOldestFirst
}

describe("RoutingSpecs", () => {
  it.effect("resolves the specs it was built with, by name", () =>
    Effect.gen(function*() {
      const specs = yield* RoutingSpecs.RoutingSpecs
      expect(specs.names).toEqual(["companion", "mine"])
      expect(yield* specs.resolve("companion")).toBe(custom)
      expect((yield* specs.resolve("mine")).key).toBe("user-background")
    }).pipe(Effect.provide(RoutingSpecs.layer({ companion: custom, mine: RoutingPresets.userBackground }))))

  it.effect("fails with RoutingSpecNotFound naming what is available", () =>
    Effect.gen(function*() {
      const specs = yield* RoutingSpecs.RoutingSpecs
      const result = yield* Effect.either(specs.resolve("userBackground"))
      expect(Either.isLeft(result)).toBe(true)
      if (Either.isLeft(result)) {
        expect(result.left._tag).toBe("RoutingSpecNotFound")
        expect(result.left.message).toBe(`no routing spec named "userBackground" (known: project, user-background)`)
      }
      const proto = yield* Effect.either(specs.resolve("__proto__"))
      expect(Either.isLeft(proto)).toBe(true)
    }).pipe(Effect.provide(RoutingSpecs.layerPresets)))

  it.effect("an empty registry says so", () =>
    Effect.gen(function*() {
      const specs = yield* RoutingSpecs.RoutingSpecs
      const result = yield* Effect.flip(specs.resolve("project"))
      expect(result.message).toBe(`no routing spec named "project" (none are registered)`)
    }).pipe(Effect.provide(RoutingSpecs.layer({}))))
})
