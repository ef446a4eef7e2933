import { IdGenerator, MemoryQuery, MemoryStore, MemoryWrite } from "@engram/core"
import type { MemoryRecord } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as TestServices from "effect/TestServices"

/**
 * Runs a test body against a freshly built store, with sequential ids `mem-000001`, …. The body may
 * use the store, anything else the layer provides (`RExtra`) and the test services.
 */
export interface Provide<RExtra, LE> {
  <A, E>(
    self: Effect.Effect<A, E, MemoryStore.MemoryStore | RExtra | IdGenerator.IdGenerator | TestServices.TestServices>
  ): Effect.Effect<A, E | LE, TestServices.TestServices>
}

export const makeProvide = <RExtra, LE>(
  layer: Layer.Layer<MemoryStore.MemoryStore | RExtra, LE>
): Provide<RExtra, LE> =>
<A, E>(
  self: Effect.Effect<A, E, MemoryStore.MemoryStore | RExtra | IdGenerator.IdGenerator | TestServices.TestServices>
) =>
  // The layer provides everything but the test services; TypeScript cannot subtract a generic union.
  Effect.provide(self, Layer.merge(layer, IdGenerator.sequential("mem"))) as Effect.Effect<
    A,
    E | LE,
    TestServices.TestServices
  >

export const store = MemoryStore.MemoryStore

export const DAY = 86_400_000

/** A fixed instant with a non-zero millisecond part, so timestamp precision is visible. */
export const T0 = Date.UTC(2025, 2, 14, 9, 26, 53, 589)

export const iso = (millis: number): string => new Date(millis).toISOString()

/** A record in its JSON-safe stored form: the shape compared field by field. */
export const plain = (record: MemoryRecord.MemoryRecord): typeof MemoryRecord.MemoryRecord.Encoded =>
  MemoryWrite.encodeStoredRecord(record)

export const idsOf = (records: ReadonlyArray<MemoryRecord.MemoryRecord>): ReadonlyArray<string> =>
  records.map((record) => record.id)

export const sortedIds = (records: ReadonlyArray<MemoryRecord.MemoryRecord>): ReadonlyArray<string> =>
  idsOf(records).slice().sort(MemoryQuery.compareRaw)

/** The error `self` fails with; dies (failing the test) when it succeeds. */
export const failure = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<E, never, R> =>
  Effect.flatMap(
    Effect.either(self),
    Either.match({
      onLeft: Effect.succeed,
      onRight: (value) =>
        Effect.dieMessage(`expected the operation to fail, but it succeeded with ${JSON.stringify(value)}`)
    })
  )

/** Every record the filters admit, in listing order (one page of the maximum size). */
export const listAll = (filters: MemoryQuery.MemoryFilters = {}) =>
  Effect.flatMap(store, (s) => s.list({ ...filters, limit: MemoryQuery.MAX_LIMIT }))

/** Pages through a listing with `limit`, returning every page. */
export const pageThrough = (query: Omit<MemoryQuery.ListQuery, "cursor">, maxPages = 1_000) =>
  Effect.gen(function*() {
    const s = yield* store
    const pages: Array<MemoryStore.ListPage> = []
    let cursor: string | undefined
    do {
      const page: MemoryStore.ListPage = yield* s.list({ ...query, ...(cursor !== undefined ? { cursor } : {}) })
      pages.push(page)
      cursor = page.nextCursor
      if (pages.length > maxPages) return yield* Effect.dieMessage(`paging did not end after ${maxPages} pages`)
    } while (cursor !== undefined)
    return pages
  })

/**
 * Writes each input in its own write, at one instant: records that tie on `createdAt` (a batch's
 * are a millisecond apart, decision 0173).
 */
export const writeEach = (
  s: MemoryStore.Service,
  inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>
) => Effect.forEach(inputs, (input) => s.write([input]), { discard: true })
