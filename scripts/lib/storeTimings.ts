/**
 * Where a projection's time goes: the memory and telemetry stores wrapped so that every call
 * made through them is timed, by method (a search also by its order: the recall search ranks by
 * relevance, the prior-session digest reads the newest). What the calls do not account for is
 * `project()`'s own work — composing, counting tokens, screening — and the runtime's.
 */
import { MemoryStore, TelemetryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

export interface CallTime {
  readonly call: string
  readonly ms: number
  readonly calls: number
}

const labelOf = (service: string, method: string, args: ReadonlyArray<unknown>): string => {
  if (method !== "search") return `${service}.${method}`
  const options = args[1] as { readonly order?: string } | undefined
  return `${service}.search (${options?.order ?? "relevance"})`
}

export const make = () => {
  const totals = new Map<string, { ms: number; calls: number }>()
  let paused = false
  const timed = <S extends object>(service: string, target: S): S => {
    const wrapped: Record<string, unknown> = { ...(target as Record<string, unknown>) }
    for (const [method, value] of Object.entries(target)) {
      if (typeof value !== "function") continue
      wrapped[method] = (...args: Array<unknown>) => {
        const result: unknown = (value as (...args: Array<unknown>) => unknown)(...args)
        if (!Effect.isEffect(result)) return result
        return Effect.suspend(() => {
          const start = performance.now()
          return Effect.ensuring(
            result,
            Effect.sync(() => {
              if (paused) return
              const label = labelOf(service, method, args)
              const total = totals.get(label) ?? { ms: 0, calls: 0 }
              total.ms += performance.now() - start
              total.calls++
              totals.set(label, total)
            })
          )
        })
      }
    }
    return wrapped as unknown as S
  }
  return {
    /** The stores of `stores`, every call timed (the rest of its services as they are). */
    around: <E, R>(
      stores: Layer.Layer<MemoryStore.MemoryStore | TelemetryStore.TelemetryStore, E, R>
    ) =>
      Layer.merge(
        Layer.effect(
          MemoryStore.MemoryStore,
          Effect.map(MemoryStore.MemoryStore, (s) => {
            const wrapped = timed("memory", s)
            // A store reading searches in pages (decision 0226) keeps doing so, each take timed.
            const paged = MemoryStore.pagesOf(s)
            return paged === undefined
              ? wrapped
              : MemoryStore.withPages(wrapped, (text, options) => {
                const pages = paged(text, options)
                return { ...pages, take: timed("memory", { "search pages": pages.take })["search pages"] }
              })
          })
        ),
        Layer.effect(
          TelemetryStore.TelemetryStore,
          Effect.map(TelemetryStore.TelemetryStore, (s) => timed("telemetry", s))
        )
      ).pipe(Layer.provide(stores)),
    reset: () => totals.clear(),
    /** Runs `effect` with its store calls left out of the totals (the bench's own calls). */
    untimed: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
      Effect.suspend(() => {
        paused = true
        return Effect.ensuring(effect, Effect.sync(() => (paused = false)))
      }),
    /** Each call's mean milliseconds and count per projection, over `projections`. */
    perProjection: (projections: number): ReadonlyArray<CallTime> =>
      [...totals].map(([call, { calls, ms }]) => ({ call, ms: ms / projections, calls: calls / projections }))
  }
}

export type StoreTimings = ReturnType<typeof make>
