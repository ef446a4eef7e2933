/**
 * The `PromotionStore` conformance kit: one suite every promotion-store backend runs from its own
 * vitest file, so the in-memory, SQLite and PostgreSQL stores agree on what a promotion row is,
 * that it is committed once, and what the save gate's exact lookup returns.
 *
 * Covered: rows read back field for field (declined rows, content keys and non-ASCII addresses
 * included); commit-once per record and spec, atomic batches and typed errors; the exact,
 * scoped `placementKey` lookup; listing by scope and by record ids, with the optional spec
 * filter; one total read order; batches larger than any backend's statement chunk; and a property
 * check of every read against a plain model over random batches.
 *
 * Every test builds the layer afresh, so a backend on a shared server must hand each build its
 * own empty store.
 *
 * @example
 * ```ts
 * import { runPromotionStoreConformance } from "@engram/conformance"
 * import { PromotionStore } from "@engram/core"
 *
 * runPromotionStoreConformance("in-memory", PromotionStore.layerMemory)
 * ```
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import { PromotionStore, Routing } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { failure } from "./internal/harness.js"

const T0 = Date.UTC(2025, 2, 14, 9, 26, 53, 589)

const encodeRow = Schema.encodeSync(PromotionStore.PromotionRow)

type Row = PromotionStore.PromotionRow

/**
 * A placed row at `(section, key)`, or a declined row when `section` is `null`.
 *
 * @since 0.1.0
 * @category fixtures
 */
export const promotionRow = (
  recordId: string,
  section: string | null,
  key = "name",
  fields: Partial<Row> = {}
): Row => {
  const placement = section === null ? null : Routing.background(section, key)
  return {
    recordId,
    scope: "global",
    placement,
    placementKey: placement === null ? null : Routing.placementKey(placement),
    keySource: placement === null ? null : "label",
    specKey: "user-background",
    specVersion: "1",
    promotedAt: DateTime.unsafeMake(T0),
    tier: placement === null ? null : "auto",
    ...fields
  }
}

const plain = (rows: ReadonlyArray<Row>) => rows.map((row) => encodeRow(row))
const ids = (read: PromotionStore.PromotionRead) => read.rows.map((row) => `${row.recordId}/${row.specKey}`)
const store = PromotionStore.PromotionStore

const everything = (s: PromotionStore.Service, scopes: ReadonlyArray<string>) =>
  Effect.map(
    Effect.forEach(scopes, (scope) => s.listByScope(scope)),
    (reads) => reads.flatMap((read) => plain(read.rows))
  )

/**
 * Registers the promotion-store conformance suite for one backend. Call it at the top level of a
 * vitest file. `RExtra` is whatever else the layer provides (a SQL client, say).
 *
 * @since 0.1.0
 * @category conformance
 */
export const runPromotionStoreConformance = <RExtra = never, E = never>(
  name: string,
  layer: Layer.Layer<PromotionStore.PromotionStore | RExtra, E>
): void => {
  const provide = <A, E2>(self: Effect.Effect<A, E2, PromotionStore.PromotionStore>) =>
    Effect.provide(self, layer) as Effect.Effect<A, E2 | E>

  describe(`PromotionStore conformance: ${name}`, () => {
    describe("rows", () => {
      it.effect("reads back every field of what was committed, declined and undeclared rows included", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          const rows = [
            promotionRow("m-1", "about_user", "name"),
            promotionRow("m-2", null),
            promotionRow("m-3", "dropped_section", "tz", { tier: null, specVersion: "2025-03.b" }),
            promotionRow("m-4", "about_user", Routing.contentKey("Lives in Oslo"), { keySource: "content" }),
            promotionRow("m-5", "über_ü", "naïve \"quoted\" 🦊", { scope: "project:ünï", tier: "guarded" }),
            promotionRow("m-6", "prefs", "tea", { promotedAt: DateTime.unsafeMake(T0 + 1), tier: "earned" })
          ]
          const committed = yield* s.commit(rows)
          expect(plain(committed)).toEqual(plain(rows))
          const read = yield* s.getByRecords(rows.map((row) => row.recordId))
          expect(read.skipped).toBe(0)
          expect(plain(read.rows)).toEqual(plain(rows))
          const [decodedFirst] = read.rows
          expect(DateTime.toEpochMillis(decodedFirst!.promotedAt)).toBe(T0)
        })))

      it.effect("an empty batch stores nothing and succeeds", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          expect(yield* s.commit([])).toEqual([])
          expect((yield* s.listByScope("global")).rows).toEqual([])
        })))
    })

    describe("committed once", () => {
      it.effect("a second row for the same record and spec fails with DuplicatePromotion", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          const first = promotionRow("m-1", "about_user", "name")
          yield* s.commit([first])
          const error = yield* failure(s.commit([promotionRow("m-1", "about_user", "nickname")]))
          expect(error).toBeInstanceOf(PromotionStore.DuplicatePromotion)
          expect(error).toMatchObject({ _tag: "DuplicatePromotion", recordId: "m-1", specKey: "user-background" })
          expect(error.message).toContain(`memory "m-1" already has a promotion row for spec "user-background"`)
          expect(plain((yield* s.getByRecords(["m-1"])).rows)).toEqual(plain([first]))
        })))

      it.effect("the same record may have one row per spec", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.commit([promotionRow("m-1", "about_user", "name")])
          yield* s.commit([promotionRow("m-1", "conventions", "name", { specKey: "project" })])
          expect(ids(yield* s.getByRecords(["m-1"]))).toEqual(["m-1/project", "m-1/user-background"])
        })))

      it.effect("a batch holding a stored duplicate stores nothing", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.commit([promotionRow("m-1", "about_user", "name")])
          const error = yield* failure(
            s.commit([promotionRow("m-2", "about_user", "tz"), promotionRow("m-1", null), promotionRow("m-3", null)])
          )
          expect(error).toMatchObject({ _tag: "DuplicatePromotion", recordId: "m-1" })
          expect(ids(yield* s.listByScope("global"))).toEqual(["m-1/user-background"])
        })))

      it.effect("a batch repeating a record and spec stores nothing", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          const error = yield* failure(
            s.commit([promotionRow("m-1", "about_user", "name"), promotionRow("m-2", null), promotionRow("m-1", null)])
          )
          expect(error).toMatchObject({ _tag: "DuplicatePromotion", recordId: "m-1", specKey: "user-background" })
          expect((yield* s.listByScope("global")).rows).toEqual([])
        })))

      const invalid: ReadonlyArray<readonly [string, Row, string]> = [
        [
          "an address that disagrees with the placement",
          promotionRow("m-9", "about_user", "name", { placementKey: JSON.stringify(["about_user", "other"]) }),
          "does not match its placement"
        ],
        [
          "a declined row with an address",
          promotionRow("m-9", null, "name", { placementKey: JSON.stringify(["about_user", "name"]) }),
          "a declined row (no placement) has no placementKey"
        ],
        ["a declined row with a tier", promotionRow("m-9", null, "name", { tier: "auto" }), "has no tier"],
        [
          "a placed row without a key source",
          promotionRow("m-9", "about_user", "name", { keySource: null }),
          "keySource"
        ],
        ["an empty spec key", promotionRow("m-9", null, "name", { specKey: "" }), "specKey must not be empty"],
        ["an invalid scope", promotionRow("m-9", null, "name", { scope: "team:red" }), "scope"],
        ["an invalid record id", promotionRow("not an id", null), "recordId"],
        [
          "a malformed placement",
          { ...promotionRow("m-9", "about_user"), placement: { primitive: "background", section: "", key: "name" } },
          "placement"
        ],
        // Rows a caller built without the types (from JSON, say): the store checks every field.
        ["an unknown tier", { ...promotionRow("m-9", "about_user"), tier: "bogus" } as unknown as Row, "tier"],
        [
          "an unknown key source",
          { ...promotionRow("m-9", "about_user"), keySource: "guess" } as unknown as Row,
          "keySource"
        ],
        [
          "a promotion instant that is not a DateTime",
          { ...promotionRow("m-9", null), promotedAt: "2026-01-01T00:00:00Z" } as unknown as Row,
          "promotedAt"
        ]
      ]
      for (const [what, bad, problem] of invalid) {
        it.effect(`refuses ${what} with InvalidPromotionRow naming the index, storing nothing`, () =>
          provide(Effect.gen(function*() {
            const s = yield* store
            const error = yield* failure(s.commit([promotionRow("m-1", null), bad]))
            expect(error).toBeInstanceOf(PromotionStore.InvalidPromotionRow)
            expect(error).toMatchObject({ _tag: "InvalidPromotionRow", index: 1 })
            expect(error.message).toContain(problem)
            expect((yield* s.listByScope("global")).rows).toEqual([])
          })))
      }
    })

    describe("lookup", () => {
      const fixture = [
        promotionRow("m-1", "about_user", "name"),
        promotionRow("m-2", "about_user", "name", { specKey: "companion" }),
        promotionRow("m-3", "about_user", "name", { scope: "project:alpha" }),
        promotionRow("m-4", "about_user", "name "),
        promotionRow("m-5", "about_user", "names"),
        promotionRow("m-6", "about_user_x", "name"),
        promotionRow("m-7", null),
        promotionRow("m-0", "about_user", "name", { promotedAt: DateTime.unsafeMake(T0 + 5_000) })
      ]
      const key = Routing.placementKey(Routing.background("about_user", "name"))

      it.effect("returns exactly the rows at that address in that scope", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.commit(fixture)
          const found = yield* s.lookup("global", key)
          expect(ids(found)).toEqual(["m-0/user-background", "m-1/user-background", "m-2/companion"])
          expect(found.skipped).toBe(0)
          expect(ids(yield* s.lookup("project:alpha", key))).toEqual(["m-3/user-background"])
          expect(ids(yield* s.lookup("project:beta", key))).toEqual([])
        })))

      it.effect("forget deletes every row of the records, every spec, and no other; the address frees up", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.commit(fixture)
          expect(yield* s.forget(["m-1", "m-2", "m-7", "ghost"])).toBe(3)
          expect(ids(yield* s.lookup("global", key))).toEqual(["m-0/user-background"])
          expect(ids(yield* s.getByRecords(["m-1", "m-2", "m-7", "m-3"]))).toEqual(["m-3/user-background"])
          expect(yield* s.forget([])).toBe(0)
          yield* s.commit([promotionRow("m-1", "about_user", "name")])
          expect(ids(yield* s.lookup("global", key))).toEqual(["m-0/user-background", "m-1/user-background"])
        })))

      it.effect("narrows to one spec", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.commit(fixture)
          expect(ids(yield* s.lookup("global", key, { specKey: "companion" }))).toEqual(["m-2/companion"])
          expect(ids(yield* s.lookup("global", key, { specKey: "nobody" }))).toEqual([])
        })))

      it.effect("matches neither neighbours nor prefixes of the address, nor declined rows", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.commit(fixture)
          expect(ids(yield* s.lookup("global", JSON.stringify(["about_user", "name "])))).toEqual([
            "m-4/user-background"
          ])
          expect(ids(yield* s.lookup("global", JSON.stringify(["about_user", "nam"])))).toEqual([])
          expect(ids(yield* s.lookup("global", JSON.stringify(["about_user"])))).toEqual([])
          expect(ids(yield* s.lookup("global", "null"))).toEqual([])
          expect(ids(yield* s.lookup("global", ""))).toEqual([])
          expect(ids(yield* s.lookup("global", "%"))).toEqual([])
        })))

      it.effect("finds addresses with quotes and non-ASCII text exactly", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          const odd = promotionRow("m-1", "über_ü", "naïve \"quoted\" 🦊 _%")
          yield* s.commit([odd, promotionRow("m-2", "über_ü", "naive \"quoted\" 🦊 _%")])
          expect(ids(yield* s.lookup("global", odd.placementKey!))).toEqual(["m-1/user-background"])
        })))
    })

    describe("listing", () => {
      it.effect("lists a scope, declined rows included, in record id then spec order", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.commit([
            promotionRow("m-b", "about_user", "name"),
            promotionRow("m-B", null),
            promotionRow("m-a", "about_user", "tz", { specKey: "z-spec" }),
            promotionRow("m-a", "about_user", "tz"),
            promotionRow("m-c", "about_user", "tz", { scope: "session:s1" })
          ])
          expect(ids(yield* s.listByScope("global"))).toEqual([
            "m-B/user-background",
            "m-a/user-background",
            "m-a/z-spec",
            "m-b/user-background"
          ])
          expect(ids(yield* s.listByScope("global", { specKey: "z-spec" }))).toEqual(["m-a/z-spec"])
          expect(ids(yield* s.listByScope("session:s1"))).toEqual(["m-c/user-background"])
          expect(ids(yield* s.listByScope("project:none"))).toEqual([])
        })))

      it.effect("gets the rows of records by id: unknown ids left out, repeats once", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.commit([
            promotionRow("m-2", "about_user", "name"),
            promotionRow("m-1", null, "name", { scope: "project:alpha" }),
            promotionRow("m-1", "about_user", "tz", { specKey: "companion" })
          ])
          expect(ids(yield* s.getByRecords(["m-2", "ghost", "m-1", "m-2"]))).toEqual([
            "m-1/companion",
            "m-1/user-background",
            "m-2/user-background"
          ])
          expect(ids(yield* s.getByRecords(["m-1"], { specKey: "companion" }))).toEqual(["m-1/companion"])
          expect(ids(yield* s.getByRecords([]))).toEqual([])
        })))

      it.effect("stores and finds batches larger than any statement chunk", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          const rows = Array.from({ length: 1_234 }, (_, i) =>
            promotionRow(`m-${String(i).padStart(5, "0")}`, i % 10 === 0 ? null : "about_user", `k${i % 97}`))
          yield* s.commit(rows)
          expect((yield* s.listByScope("global")).rows.length).toBe(1_234)
          expect(
            (yield* s.getByRecords(rows.map((row) =>
              row.recordId
            ))).rows.length
          ).toBe(1_234)
          const at = yield* s.lookup("global", Routing.placementKey(Routing.background("about_user", "k5")))
          expect(at.rows.map((row) => row.placement?.key)).toEqual(at.rows.map(() => "k5"))
          expect(at.rows.length).toBe(rows.filter((row) => row.placementKey?.endsWith(`"k5"]`)).length)
        })))
    })

    describe("against a model", () => {
      const scopes = ["global", "project:alpha", "session:s1"] as const
      const specs = ["user-background", "project"] as const
      const rowArb = fc.record({
        recordId: fc.integer({ min: 0, max: 40 }).map((n) => `m-${n}`),
        specKey: fc.constantFrom(...specs),
        scope: fc.constantFrom(...scopes),
        section: fc.option(fc.constantFrom("about_user", "prefs"), { nil: null }),
        key: fc.constantFrom("name", "tz", "Name", "c-00ff")
      }).map(({ key, recordId, scope, section, specKey }) => promotionRow(recordId, section, key, { scope, specKey }))
      const batchesArb = fc.array(fc.array(rowArb, { maxLength: 12 }), { minLength: 1, maxLength: 5 })

      it.effect.prop(
        "every read agrees with a plain model after random batches",
        [batchesArb],
        ([batches]) =>
          provide(Effect.gen(function*() {
            const s = yield* store
            const model = new Map<string, Row>()
            for (const batch of batches) {
              const result = yield* Effect.either(s.commit(batch))
              const identities = batch.map(PromotionStore.rowIdentity)
              const clash = identities.some((id, i) => model.has(id) || identities.indexOf(id) !== i)
              expect(Either.isLeft(result)).toBe(clash)
              if (!clash) { for (const row of batch) model.set(PromotionStore.rowIdentity(row), row) }
            }
            const all = [...model.values()].sort(PromotionStore.compareRows)
            for (const scope of scopes) {
              expect(plain((yield* s.listByScope(scope)).rows)).toEqual(plain(all.filter((row) => row.scope === scope)))
              for (const key of ["name", "tz", "Name", "c-00ff"]) {
                for (const section of ["about_user", "prefs"]) {
                  const address = Routing.placementKey(Routing.background(section, key))
                  for (const specKey of [undefined, ...specs]) {
                    const expected = all.filter((row) =>
                      row.scope === scope && row.placementKey === address &&
                      (specKey === undefined || row.specKey === specKey)
                    )
                    expect(plain((yield* s.lookup(scope, address, { specKey })).rows)).toEqual(plain(expected))
                  }
                }
              }
            }
            const someIds = ["m-0", "m-7", "m-40", "ghost"]
            expect(plain((yield* s.getByRecords(someIds)).rows)).toEqual(
              plain(all.filter((row) => someIds.includes(row.recordId)))
            )
            expect(yield* everything(s, scopes)).toHaveLength(model.size)
          })),
        { fastCheck: { numRuns: 40 } }
      )
    })
  })
}
