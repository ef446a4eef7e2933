import { expect, it } from "@effect/vitest"
import { MemoryStoreConformance } from "@engram/conformance"
import { MemoryStore } from "@engram/core"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { describePg } from "./pgGate.js"
import { dropSchema } from "./utilities.js"

const CLIENTS = 8
const OPS_PER_CLIENT = 150

/** Eight stores on one schema, each with its own pool: eight independent clients. */
const openClients = (url: string, schema: string): Effect.Effect<
  ReadonlyArray<MemoryStore.Service>,
  unknown,
  Scope.Scope
> =>
  Effect.forEach(
    Array.from({ length: CLIENTS }, (_, i) => i),
    () =>
      Effect.map(
        Layer.build(
          PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: 2 })))
        ),
        (context) => Context.get(context, MemoryStore.MemoryStore)
      ),
    { concurrency: "unbounded" }
  )

interface Timed<A> {
  readonly start: number
  readonly end: number
  readonly exit: Exit.Exit<A, { readonly _tag: string }>
}

const timed = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>): Effect.Effect<Timed<A>> =>
  Effect.gen(function*() {
    const start = performance.now()
    const exit = yield* Effect.exit(effect)
    return { start, end: performance.now(), exit }
  })

const failureTag = (exit: Exit.Exit<unknown, { readonly _tag: string }>): string | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : undefined

describePg("PgMemoryStore under concurrent connections", (url) => {
  const withSchema = <A, E>(f: (schema: string) => Effect.Effect<A, E, Scope.Scope>) =>
    Effect.scoped(
      Effect.gen(function*() {
        const schema = PgDatabase.temporarySchemaName("engram_conc")
        yield* Effect.addFinalizer(() => dropSchema(url, schema))
        return yield* f(schema)
      })
    )

  it.live(
    "eight clients superseding one record at once: exactly one wins, the rest get MemoryConflict",
    () =>
      withSchema((schema) =>
        Effect.gen(function*() {
          const clients = yield* openClients(url, schema)
          for (let round = 0; round < 25; round++) {
            const original = `race-${round}`
            yield* clients[0]!.write([{ id: original, content: `round ${round}`, kind: "fact" }])
            const outcomes = yield* Effect.forEach(
              clients,
              (client, i) =>
                timed(
                  client.supersede(original, { id: `race-${round}-by-${i}`, content: `winner ${i}`, kind: "fact" })
                ),
              { concurrency: "unbounded" }
            )
            const winners = outcomes.flatMap((o, i) => (Exit.isSuccess(o.exit) ? [i] : []))
            expect(winners).toHaveLength(1)
            expect(outcomes.map((o) => failureTag(o.exit)).filter((t) => t !== undefined)).toEqual(
              Array(CLIENTS - 1).fill("MemoryConflict")
            )
            const winner = `race-${round}-by-${winners[0]}`
            const stored = yield* clients[1]!.get([original, ...clients.map((_, i) => `race-${round}-by-${i}`)])
            expect(stored.records.map((r) => r.id)).toEqual([original, winner])
            expect(stored.records[0]!.supersededBy).toBe(winner)
            expect(stored.records[0]!.invalidationReason).toBe(`superseded_by:${winner}`)
            expect(stored.records[1]!.supersedes).toBe(original)
          }
        })
      ),
    60_000
  )

  it.live(
    `${CLIENTS} clients, ${CLIENTS * OPS_PER_CLIENT} mixed lifecycle operations: the end state is a serial one`,
    () =>
      withSchema((schema) =>
        Effect.gen(function*() {
          const clients = yield* openClients(url, schema)
          const report = yield* MemoryStoreConformance.raceLifecycle(clients, OPS_PER_CLIENT)
          expect(report.problems).toEqual([])
          expect(report.operations).toBe(CLIENTS * OPS_PER_CLIENT)
          // Enough collisions for the check to mean something.
          expect(report.superseded).toBeGreaterThan(50)
          expect(report.refused).toBeGreaterThan(50)
        })
      ),
    120_000
  )
})
