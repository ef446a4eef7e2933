/**
 * The `RoutingSpecs` service: resolves routing specs by name. Specs are code (pure functions), so
 * configuration names a spec and the application provides the specs it trusts as a layer.
 *
 * @example
 * import { Effect } from "effect"
 * import { RoutingSpecs } from "@engram/core"
 *
 * const program = Effect.gen(function*() {
 *   const specs = yield* RoutingSpecs.RoutingSpecs
 *   return yield* specs.resolve("user-background")
 * }).pipe(Effect.provide(RoutingSpecs.layerPresets))
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as ErrorClass from "./ErrorClass.js"
import type { MemoryRoutingSpec } from "./Routing.js"
import { presets } from "./RoutingPresets.js"

/**
 * No spec is registered under `name`; `available` lists the names that are.
 *
 * @since 0.1.0
 * @category errors
 */
export class RoutingSpecNotFound extends ErrorClass.TaggedError<RoutingSpecNotFound>()("RoutingSpecNotFound", {
  name: Schema.String,
  available: Schema.Array(Schema.String)
}, {
  errorClass: "Misconfigured",
  message: (self) => {
    const known = self.available.length === 0 ? "none are registered" : `known: ${self.available.join(", ")}`
    return `no routing spec named "${self.name}" (${known})`
  }
}) {}

/**
 * Resolves specs by name.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The registered names, sorted. */
  readonly names: ReadonlyArray<string>
  /** The spec registered under `name`. */
  readonly resolve: (name: string) => Effect.Effect<MemoryRoutingSpec, RoutingSpecNotFound>
}

/**
 * The routing-spec registry.
 *
 * @since 0.1.0
 * @category tags
 */
export class RoutingSpecs extends Context.Tag("@engram/core/RoutingSpecs")<RoutingSpecs, Service>() {}

/**
 * A registry over a record of specs, name → spec.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (specs: Readonly<Record<string, MemoryRoutingSpec>>): Service => {
  const byName = new Map(Object.entries(specs))
  const names = [...byName.keys()].sort()
  return {
    names,
    resolve: (name) => {
      const spec = byName.get(name)
      return spec === undefined
        ? Effect.fail(new RoutingSpecNotFound({ name, available: names }))
        : Effect.succeed(spec)
    }
  }
}

/**
 * A layer over a record of specs, name → spec.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (specs: Readonly<Record<string, MemoryRoutingSpec>>): Layer.Layer<RoutingSpecs> =>
  Layer.succeed(RoutingSpecs, make(specs))

/**
 * A layer with the preset specs, `user-background` and `project`. Registering them makes them
 * resolvable; an agent still uses one only if its configuration names it.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerPresets: Layer.Layer<RoutingSpecs> = layer(presets)
