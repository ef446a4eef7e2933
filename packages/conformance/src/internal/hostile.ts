import { describe, expect, it } from "@effect/vitest"
import { MemoryLimits, MemoryRecord } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { failure, idsOf, listAll, plain, type Provide, store, T0 } from "./harness.js"

const LONE_HIGH = "\uD83D"
const LONE_LOW = "\uDE00"
const NUL = "\u0000"

type WriteInput = MemoryRecord.MemoryWriteInput

const base: WriteInput = { id: "h-1", content: "Hostile input probe", kind: "note" }

/** What a refused write must look like on every backend: InvalidMemoryInput naming the field. */
const expectRefused = (input: Record<string, unknown>, field: string) =>
  Effect.gen(function*() {
    const s = yield* store
    const error = yield* failure(s.write([{ id: "ok-1", content: "Fine", kind: "note" }, input as WriteInput]))
    expect(error._tag).toBe("InvalidMemoryInput")
    expect(error._tag === "InvalidMemoryInput" && error.index).toBe(1)
    expect(error.message).toContain(field)
    // Atomic: the valid input beside it was not stored either.
    expect((yield* listAll()).records).toEqual([])
  })

/**
 * The hostile-input tier: what a store does with values a hostile or careless caller sends —
 * invalid review states, NUL, unpaired surrogates, ids and scopes no record can have, oversized
 * content and queries. Every backend must give exactly these answers, because the contract in
 * front of each one (`MemoryStore.withContract` and the record schemas) gives them.
 */
export const hostile = <RExtra, LE>(provide: Provide<RExtra, LE>) => {
  describe("review states", () => {
    it.effect("setReviewState with a state that is not one fails and leaves the record readable", () =>
      Effect.gen(function*() {
        const s = yield* store
        const [before] = yield* s.write([base])
        const error = yield* failure(s.setReviewState("h-1", "approved" as MemoryRecord.ReviewState))
        expect(error._tag).toBe("InvalidReviewState")
        expect(error.message).toContain("\"approved\" is not a review state")
        expect((yield* s.get(["h-1"])).records.map(plain)).toEqual([plain(before!)])
        expect(idsOf((yield* listAll()).records)).toEqual(["h-1"])
        expect(idsOf((yield* s.search("probe")).hits.map((hit) => hit.record))).toEqual(["h-1"])
        // Later lifecycle calls still work on it.
        expect((yield* s.setReviewState("h-1", "confirmed")).reviewState).toBe("confirmed")
        expect((yield* s.expire("h-1")).expiresAt).toBeDefined()
      }).pipe(provide))

    it.effect("a listing filter with a state that is not one is an invalid query", () =>
      Effect.gen(function*() {
        const s = yield* store
        const error = yield* failure(s.list({ reviewStates: ["approved" as MemoryRecord.ReviewState] }))
        expect(error._tag).toBe("InvalidMemoryQuery")
      }).pipe(provide))
  })

  describe("text fields: NUL and unpaired surrogates are refused, never rewritten", () => {
    const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
      ["NUL in content", { ...base, content: `before${NUL}after` }, "content"],
      ["a lone high surrogate in content", { ...base, content: `smile ${LONE_HIGH} here` }, "content"],
      ["a lone low surrogate in content", { ...base, content: `smile ${LONE_LOW}` }, "content"],
      ["a reversed surrogate pair in content", { ...base, content: `x${LONE_LOW}${LONE_HIGH}x` }, "content"],
      ["a lone surrogate in a project scope", { ...base, scope: `project:a${LONE_HIGH}` }, "scope"],
      ["NUL in a session scope", { ...base, scope: `session:a${NUL}b` }, "scope"],
      ["a lone surrogate in a label", { ...base, label: `name${LONE_LOW}` }, "label"],
      ["NUL in a label", { ...base, label: `na${NUL}me` }, "label"],
      ["a lone surrogate in a tag", { ...base, tags: ["ok", `t${LONE_HIGH}`] }, "tag"],
      ["NUL in a tag", { ...base, tags: [`t${NUL}`] }, "tag"],
      ["an empty tag", { ...base, tags: [""] }, "tag"],
      ["a lone surrogate in an epoch", { ...base, epoch: `e${LONE_HIGH}` }, "epoch"],
      ["an id with NUL", { ...base, id: `h${NUL}1` }, "id"],
      ["a non-ASCII id", { ...base, id: "h-é" }, "id"],
      ["a review state smuggled into a write", { ...base, reviewState: "approved" }, "reviewState"]
    ]
    for (const [name, input, field] of cases) {
      it.effect(`a write with ${name} is refused, naming ${field}`, () => expectRefused(input, field).pipe(provide))
    }

    it.effect("two scopes that differ only in an unpaired surrogate cannot both be written", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([{ ...base, scope: "project:a\uFFFD" }])
        yield* failure(s.write([{ ...base, id: "h-2", scope: `project:a${LONE_HIGH}` }]))
        const listed = yield* listAll({ scopes: ["project:a\uFFFD"] })
        expect(idsOf(listed.records)).toEqual(["h-1"])
        expect(listed.records[0]!.scope).toBe("project:a\uFFFD")
      }).pipe(provide))

    it.effect("well-formed astral, combining, right-to-left and zero-width text round-trips exactly", () =>
      Effect.gen(function*() {
        const s = yield* store
        const content = "😀 café (cafe\u0301) שלום \u200Bzw \u202Ebidi\u202C tab\there\nline"
        const scope = "project:😀-שלום"
        const label = "naïve 😀"
        yield* s.write([{ ...base, content, scope, label, tags: ["😀", "x\u0301"] }])
        const [record] = (yield* s.get(["h-1"], { scopes: [scope] })).records
        expect(record?.content).toBe(content)
        expect(record?.scope).toBe(scope)
        expect(record?.label).toBe(label)
        expect(record?.tags).toEqual(["😀", "x\u0301"])
        expect(idsOf((yield* listAll({ scopes: [scope] })).records)).toEqual(["h-1"])
        expect(idsOf((yield* s.search("café", { scopes: [scope] })).hits.map((hit) => hit.record))).toEqual(["h-1"])
      }).pipe(provide))

    it.effect("restoring a record with NUL content is refused and stores nothing", () =>
      Effect.gen(function*() {
        const s = yield* store
        const record = new MemoryRecord.MemoryRecord(
          {
            id: "h-1",
            content: `x${NUL}y`,
            kind: "note",
            tags: [],
            sourceType: "operator",
            scope: "global",
            deliveryPolicy: "retrieved",
            reviewState: "confirmed",
            createdAt: DateTime.unsafeMake(T0)
          },
          { disableValidation: true }
        )
        const error = yield* failure(s.restore([record]))
        expect(error._tag).toBe("InvalidMemoryInput")
        expect(error.message).toContain("NUL")
        expect((yield* listAll()).records).toEqual([])
      }).pipe(provide))
  })

  describe("ids and scopes no record can have", () => {
    it.effect("get leaves out ids no record can have and returns the rest of the batch", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([base, { ...base, id: "h-2" }])
        const result = yield* s.get(["h-1", `h${NUL}1`, `h-${LONE_HIGH}`, "", "h-2", "x".repeat(300)])
        expect(idsOf(result.records)).toEqual(["h-1", "h-2"])
        expect(result.skipped).toBe(0)
      }).pipe(provide))

    it.effect("get with a scope no record can have admits nothing", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([{ ...base, scope: "project:a\uFFFD" }])
        expect((yield* s.get(["h-1"], { scopes: [`project:a${LONE_HIGH}`] })).records).toEqual([])
        expect(idsOf((yield* s.get(["h-1"], { scopes: [`project:a${LONE_HIGH}`, "project:a\uFFFD"] })).records))
          .toEqual(["h-1"])
      }).pipe(provide))

    it.effect("a listing or search filter with an ill-formed scope is an invalid query", () =>
      Effect.gen(function*() {
        const s = yield* store
        expect((yield* failure(s.list({ scopes: [`project:${LONE_HIGH}`] })))._tag).toBe("InvalidMemoryQuery")
        expect((yield* failure(s.search("probe", { scopes: [`session:${NUL}`] })))._tag).toBe("InvalidMemoryQuery")
      }).pipe(provide))

    for (const [name, id] of [["NUL", `h${NUL}1`], ["an unpaired surrogate", `h${LONE_LOW}`], ["nothing", ""]]) {
      it.effect(`lifecycle calls on an id with ${name} fail with MemoryNotFound`, () =>
        Effect.gen(function*() {
          const s = yield* store
          yield* s.write([base])
          for (
            const error of [
              yield* failure(s.setReviewState(id!, "confirmed")),
              yield* failure(s.expire(id!)),
              yield* failure(s.supersede(id!, { content: "Next", kind: "note" }))
            ]
          ) {
            expect(error._tag).toBe("MemoryNotFound")
          }
          expect(idsOf((yield* listAll()).records)).toEqual(["h-1"])
        }).pipe(provide))
    }
  })

  describe("sizes", () => {
    const { maxContentChars, maxQueryChars } = MemoryLimits.defaults

    it.effect("content at the limit is stored; one character more is refused, naming the limit", () =>
      Effect.gen(function*() {
        const s = yield* store
        const atLimit = "a ".repeat(maxContentChars / 2)
        yield* s.write([{ ...base, content: atLimit }])
        expect((yield* s.get(["h-1"])).records[0]?.content).toBe(atLimit)
        const error = yield* failure(s.write([{ ...base, id: "h-2", content: `${atLimit}b` }]))
        expect(error._tag).toBe("InvalidMemoryInput")
        if (error._tag !== "InvalidMemoryInput") return
        expect(error.limit).toEqual({ name: "maxContentChars", max: maxContentChars, size: maxContentChars + 1 })
        expect(error.message).toContain("MemoryLimits.maxContentChars")
        const superseding = yield* failure(s.supersede("h-1", { content: `${atLimit}b`, kind: "note" }))
        expect(superseding._tag === "InvalidMemoryInput" && superseding.limit?.name).toBe("maxContentChars")
        expect(idsOf((yield* listAll()).records)).toEqual(["h-1"])
      }).pipe(provide))

    it.effect("the content limit is a setting", () =>
      Effect.gen(function*() {
        const s = yield* store
        const error = yield* failure(s.write([{ ...base, content: "x".repeat(101) }]))
        expect(error._tag === "InvalidMemoryInput" && error.limit).toEqual({
          name: "maxContentChars",
          max: 100,
          size: 101
        })
        yield* s.write([{ ...base, content: "x".repeat(100) }])
      }).pipe(Effect.provide(MemoryLimits.layer({ maxContentChars: 100 })), provide))

    it.effect("tags at the count limit are stored; one more is refused on write, supersede and restore, naming the limit", () =>
      Effect.gen(function*() {
        const s = yield* store
        const { maxTags } = MemoryLimits.defaults
        const tags = (n: number) => Array.from({ length: n }, (_, i) => `tag-${i}`)
        const [stored] = yield* s.write([{ ...base, tags: tags(maxTags) }])
        expect(stored!.tags).toEqual(tags(maxTags))
        const error = yield* failure(s.write([{ ...base, id: "h-2", tags: tags(maxTags + 1) }]))
        expect(error._tag).toBe("InvalidMemoryInput")
        if (error._tag !== "InvalidMemoryInput") return
        expect(error.limit).toEqual({ name: "maxTags", max: maxTags, size: maxTags + 1 })
        expect(error.message).toContain("tags has 33 entries, over the limit of 32 (MemoryLimits.maxTags)")
        const superseding = yield* failure(
          s.supersede("h-1", { content: "Next", kind: "note", tags: tags(maxTags + 1) })
        )
        expect(superseding._tag === "InvalidMemoryInput" && superseding.limit?.name).toBe("maxTags")
        const restoring = yield* failure(
          s.restore([
            new MemoryRecord.MemoryRecord({ ...stored!, id: "h-3", tags: tags(maxTags + 1) }, {
              disableValidation: true
            })
          ])
        )
        expect(restoring._tag === "InvalidMemoryInput" && restoring.limit?.name).toBe("maxTags")
        // A huge array is refused by its length, whatever its entries are.
        const huge = yield* failure(s.write([{ ...base, id: "h-4", tags: Array(600_000).fill(1) as never }]))
        expect(huge._tag === "InvalidMemoryInput" && huge.limit).toEqual({
          name: "maxTags",
          max: maxTags,
          size: 600_000
        })
        const all = yield* listAll({ includeSuperseded: true })
        expect(idsOf(all.records)).toEqual(["h-1"])
        expect(all.records[0]!.invalidatedAt).toBeUndefined()
      }).pipe(provide))

    it.effect("the tag count limit is a setting; a tag's size is fixed at TAG_MAX_CHARS and named when exceeded", () =>
      Effect.gen(function*() {
        const s = yield* store
        const error = yield* failure(s.write([{ ...base, tags: ["a", "b", "c"] }]))
        expect(error._tag === "InvalidMemoryInput" && error.limit).toEqual({ name: "maxTags", max: 2, size: 3 })
        yield* s.write([{ ...base, tags: ["a", "x".repeat(MemoryRecord.TAG_MAX_CHARS)] }])
        const long = yield* failure(
          s.write([{ ...base, id: "h-2", tags: ["x".repeat(MemoryRecord.TAG_MAX_CHARS + 1)] }])
        )
        expect(long._tag).toBe("InvalidMemoryInput")
        expect(long.message).toContain("a tag must be at most 64 characters (MemoryRecord.TAG_MAX_CHARS)")
        expect(idsOf((yield* listAll()).records)).toEqual(["h-1"])
      }).pipe(Effect.provide(MemoryLimits.layer({ maxTags: 2 })), provide))

    it.effect("a search text over the query limit is refused, naming the limit; at the limit it runs", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([base])
        const atLimit = `probe ${"w".repeat(maxQueryChars - 6)}`
        expect(idsOf((yield* s.search(atLimit)).hits.map((hit) => hit.record))).toEqual(["h-1"])
        const error = yield* failure(s.search(`${atLimit}w`))
        expect(error._tag).toBe("InvalidMemoryQuery")
        expect(error._tag === "InvalidMemoryQuery" && error.limit).toEqual({
          name: "maxQueryChars",
          max: maxQueryChars,
          size: maxQueryChars + 1
        })
        expect(error.message).toContain("MemoryLimits.maxQueryChars")
      }).pipe(provide))

    it.effect("a query of thousands of distinct words within the limit answers with the matching records", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([base, { id: "h-2", content: "another note about w1 only", kind: "note" }])
        // About 2,000 distinct tokens in 8,000 characters, almost all held by no record: the one
        // that matches is last, so no planner bound may drop it from the match set.
        const words = Array.from({ length: 2_300 }, (_, i) => `q${i.toString(36)}`).join(" ")
        const query = `${words} probe`.slice(-maxQueryChars)
        expect(query.length).toBe(maxQueryChars)
        expect(idsOf((yield* s.search(query)).hits.map((hit) => hit.record))).toEqual(["h-1"])
        // First and last token matching, thousands between: both records, on every backend.
        const both = `w1 ${words}`.slice(0, maxQueryChars - 6) + " probe"
        expect([...idsOf((yield* s.search(both)).hits.map((hit) => hit.record))].sort()).toEqual(["h-1", "h-2"])
        // Under the limit but thousands of tokens that all match nothing: no hits, no failure.
        expect((yield* s.search(words.slice(0, maxQueryChars))).hits).toEqual([])
      }).pipe(provide))

    it.effect("search text with NUL and unpaired surrogates matches on its other words", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([base])
        const hits = (yield* s.search(`${NUL}probe${LONE_HIGH} ${LONE_LOW}`)).hits
        expect(idsOf(hits.map((hit) => hit.record))).toEqual(["h-1"])
      }).pipe(provide))
  })
}
