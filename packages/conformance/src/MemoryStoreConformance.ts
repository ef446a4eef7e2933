/**
 * The `MemoryStore` conformance kit: one suite every backend runs from its own vitest file, so
 * that in-memory, SQLite and PostgreSQL stores cannot drift apart.
 *
 * - Tier 1 (every backend): attributes, create-only and atomic writes, the listing order with its
 *   batch tie, cursors, every filter, scope isolation, the lifecycle operations, typed errors, and
 *   forget (hard deletion with tombstones, promotion rows included). The layer provides a
 *   `PromotionStore` on the same backend beside the `MemoryStore`: the type asks for both.
 * - Conversation neighbours (every backend): `neighbours` reads the same records in the same
 *   conversation order everywhere, keeps to scope and thread, applies the deliverable, review,
 *   policy, kind and expiry filters as search does, and refuses a window, a number of positions or
 *   a position past the limits with `InvalidMemoryQuery` naming the limit or field.
 * - World time (every backend): `validFrom` / `validTo` round-trip, a deliverable read is current
 *   (valid now), and `asOf` reads the records valid at an instant — superseded ones until their
 *   successor's `validFrom` — with the same ids from a listing and (keyword backends) a search.
 * - Corroboration (every backend): a restatement's count, distinct sessions (the newest kept) and
 *   last time on its holder, the same from every read; nothing else about the record changes;
 *   concurrent corroborations are all counted.
 * - Hostile input (every backend): invalid review states, NUL and unpaired surrogates in every
 *   text field, ids and scopes no record can have, oversized content and queries — refused or
 *   answered identically everywhere.
 * - Tier 2 (backends whose `capabilities.search` is `"keyword"`): the shared corpus's match sets,
 *   compared as sorted id sets. Rank order is deliberately not compared.
 * - Concurrency (every backend): fibers racing supersede, expire and review on the same few
 *   records — exactly one supersession wins, nothing acknowledged is lost, every review state is
 *   one a serial order leaves (10,000 operations × 8 fibers unless `options.race` says otherwise).
 * - Optionally, bad-row tolerance, for backends that can corrupt a stored row on purpose.
 *
 * Every test builds the layer afresh, runs under `TestClock` and draws generated ids from
 * `IdGenerator.sequential("mem")`. A backend on a shared server must therefore hand each build
 * its own empty store — a PostgreSQL schema per build, for example.
 *
 * @example
 * ```ts
 * import { runMemoryStoreConformance, runMemoryStoreModelCheck } from "@engram/conformance"
 * import { MemoryStore, PromotionStore } from "@engram/core"
 * import * as Layer from "effect/Layer"
 *
 * runMemoryStoreConformance("in-memory", Layer.merge(MemoryStore.layerMemory, PromotionStore.layerMemory))
 * runMemoryStoreModelCheck("in-memory", MemoryStore.layerMemory)
 * ```
 *
 * @since 0.1.0
 */
import { describe, it } from "@effect/vitest"
import { MemoryStore, type PromotionStore } from "@engram/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { badRows } from "./internal/badRows.js"
import { concurrency, raceLifecycle, type RaceReport } from "./internal/concurrency.js"
import { corroboration } from "./internal/corroboration.js"
import { forget } from "./internal/forget.js"
import { makeProvide } from "./internal/harness.js"
import { hostile } from "./internal/hostile.js"
import { checkAgainstModel } from "./internal/modelCheck.js"
import { neighbours } from "./internal/neighbours.js"
import { ranking } from "./internal/ranking.js"
import { searchPages } from "./internal/searchPages.js"
import { tier1 } from "./internal/tier1.js"
import { tier2 } from "./internal/tier2.js"
import { worldTime } from "./internal/worldTime.js"

/**
 * Options for {@link runMemoryStoreConformance}. `RExtra` is whatever the layer provides besides
 * the store (a SQL client, say), available to `corruptRecord`.
 *
 * @since 0.1.0
 * @category models
 */
export interface ConformanceOptions<RExtra = never> {
  /**
   * Makes the stored row of `id` undecodable (e.g. an unknown `kind` written with raw SQL) while
   * leaving it where reads still reach it. When given, the kit also checks that list, get and
   * (with keyword search) search skip that row, return the others and report `skipped: 1`.
   * Runs inside the same layer build as the store, so it can use any service the layer provides.
   */
  readonly corruptRecord?: (id: string) => Effect.Effect<void, unknown, MemoryStore.MemoryStore | RExtra>
  /**
   * The size of the concurrency tier's race: operations in all (default {@link RACE_OPERATIONS})
   * and fibers running them (default 8).
   */
  readonly race?: { readonly operations?: number; readonly fibers?: number }
}

/**
 * How many racing lifecycle operations the concurrency tier runs by default (issue 26's figure).
 *
 * @since 0.1.0
 * @category constants
 */
export const RACE_OPERATIONS = 10_000

/**
 * Options for {@link runMemoryStoreModelCheck}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ModelCheckOptions {
  /** Generated command sequences to run (default 100). */
  readonly numRuns?: number
  /** Longest generated sequence (default 30 commands). */
  readonly maxCommands?: number
  /** Replays one fast-check seed, e.g. the one a failure printed. */
  readonly seed?: number
  /** Vitest timeout for the whole check, in milliseconds (default 60 000). */
  readonly timeout?: number
}

/**
 * Builds the layer once, at collection time, to read what the store declares.
 *
 * @since 0.1.0
 * @category capabilities
 */
export const readCapabilities = <RExtra, E>(
  layer: Layer.Layer<MemoryStore.MemoryStore | RExtra, E>
): Promise<MemoryStore.StoreCapabilities> =>
  Effect.runPromise(
    Effect.provide(Effect.map(MemoryStore.MemoryStore, (store) => store.capabilities), layer) as Effect.Effect<
      MemoryStore.StoreCapabilities,
      E
    >
  )

/** Builds the layer once, at collection time, to read whether its store reads searches in pages. */
const readPaged = <RExtra, E>(layer: Layer.Layer<MemoryStore.MemoryStore | RExtra, E>): Promise<boolean> =>
  Effect.runPromise(
    Effect.provide(
      Effect.map(MemoryStore.MemoryStore, (store) => MemoryStore.pagesOf(store) !== undefined),
      layer
    ) as Effect.Effect<boolean, E>
  )

/**
 * Registers the conformance suite for one backend: Tier 1 always, Tier 2 when the store declares
 * keyword search (and its search pages when it reads searches in pages, `MemoryStore.pagesOf`),
 * bad-row tolerance when `options.corruptRecord` is given. `layer` provides the
 * `MemoryStore` and a `PromotionStore` on the same backend (forget deletes promotion rows with
 * their records). Call it at the top level of a vitest file.
 *
 * @since 0.1.0
 * @category conformance
 */
export const runMemoryStoreConformance = <RExtra = never, E = never>(
  name: string,
  layer: Layer.Layer<MemoryStore.MemoryStore | PromotionStore.PromotionStore | RExtra, E>,
  options: ConformanceOptions<RExtra> = {}
): void => {
  const provide = makeProvide(layer)
  describe(`MemoryStore conformance: ${name}`, async () => {
    const capabilities = await readCapabilities(layer)
    describe("Tier 1", () => tier1(provide))
    describe("Tier 1: forget", () => forget(provide))
    describe("hostile input", () => hostile(provide))
    describe("Tier 1: conversation neighbours", () => neighbours(provide))
    describe("Tier 1: world time", () => worldTime(provide, capabilities.search === "keyword"))
    describe("Tier 1: corroboration", () => corroboration(provide, capabilities.search === "keyword"))
    describe("concurrency", () =>
      concurrency(provide, {
        operations: options.race?.operations ?? RACE_OPERATIONS,
        fibers: options.race?.fibers ?? 8
      }))
    if (capabilities.search === "keyword") {
      describe("Tier 2: keyword search", () => tier2(provide))
      describe("Tier 2: ranking", () => ranking(provide))
      if (await readPaged(layer)) describe("Tier 2: search pages", () => searchPages(provide, options.corruptRecord))
    }
    const corrupt = options.corruptRecord
    if (corrupt !== undefined) {
      describe("bad rows", () => badRows(provide, corrupt, capabilities.search === "keyword"))
    }
  })
}

/**
 * Registers a model-based test: random sequences of writes, review changes, supersessions,
 * expiries, listings (filters, limits, cursors, including cursors held across later writes),
 * gets, searches and clock moves run against fresh builds of `layer` and against a plain model
 * of the contract. After every command the results must agree — listings exactly, searches as
 * sorted id sets (search commands run only when the store declares keyword search) — and so must
 * the whole store. A failure prints the shrunk command sequence and the seed to replay it.
 *
 * @since 0.1.0
 * @category conformance
 */
export const runMemoryStoreModelCheck = <RExtra = never, E = never>(
  name: string,
  layer: Layer.Layer<MemoryStore.MemoryStore | RExtra, E>,
  options: ModelCheckOptions = {}
): void => {
  it(
    `MemoryStore model check: ${name} agrees with the model on random command sequences`,
    () => checkAgainstModel(layer, options),
    options.timeout ?? 60_000
  )
}

/**
 * Races supersede, expire and review from one fiber per store given (the same store several
 * times, or independent clients of one database) and reports every inconsistency of the end state:
 * the concurrency tier's check, for a test of a backend's own clients.
 *
 * @since 0.1.0
 * @category conformance
 */
export { raceLifecycle }

/**
 * What {@link raceLifecycle} found.
 *
 * @since 0.1.0
 * @category models
 */
export type { RaceReport }
