import { describe, expect, it } from "@effect/vitest"
import { MemoryQuery, MemoryRecord } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import {
  DAY,
  failure,
  idsOf,
  iso,
  listAll,
  pageThrough,
  plain,
  type Provide,
  sortedIds,
  store,
  T0,
  writeEach
} from "./harness.js"

const sourceTypes: ReadonlyArray<{
  readonly sourceType: MemoryRecord.SourceType
  readonly trustTier: MemoryRecord.TrustTier
  readonly reviewState: MemoryRecord.ReviewState
}> = [
  { sourceType: "operator", trustTier: 3, reviewState: "confirmed" },
  { sourceType: "extracted", trustTier: 2, reviewState: "pending" },
  { sourceType: "harvest", trustTier: 2, reviewState: "pending" },
  { sourceType: "conversation", trustTier: 2, reviewState: "pending" },
  { sourceType: "background_report", trustTier: 2, reviewState: "pending" },
  { sourceType: "ingest", trustTier: 1, reviewState: "pending" },
  { sourceType: "unknown", trustTier: 1, reviewState: "pending" }
]

const optionalFields = [
  "label",
  "epoch",
  "expiresAt",
  "invalidatedAt",
  "invalidationReason",
  "supersededBy",
  "supersedes",
  "domain"
] as const

// Writes one record per step, one second apart, so the listing order is known:
// f-ref-new, (f-ref-old), f-episode, f-decision, f-note, f-fact, f-profile.
// Then moves the clock two days on, past f-episode's expiry.
const writeFilterFixture = Effect.gen(function*() {
  const s = yield* store
  yield* TestClock.setTime(T0)
  const step = (input: MemoryRecord.MemoryWriteInput) => Effect.zipRight(s.write([input]), TestClock.adjust("1 second"))
  yield* step({
    id: "f-profile",
    content: "Doug is the operator",
    kind: "profile",
    sourceType: "operator",
    deliveryPolicy: "always"
  })
  yield* step({
    id: "f-fact",
    content: "Alpha ships weekly",
    kind: "fact",
    sourceType: "extracted",
    scope: "project:alpha"
  })
  yield* step({
    id: "f-note",
    content: "Session scratch note",
    kind: "note",
    sourceType: "ingest",
    scope: "session:s1",
    deliveryPolicy: "on_demand"
  })
  yield* step({
    id: "f-decision",
    content: "Alpha uses tabs",
    kind: "decision",
    sourceType: "operator",
    scope: "project:alpha"
  })
  yield* step({
    id: "f-episode",
    content: "Met Ana today",
    kind: "episode",
    sourceType: "conversation",
    expiresInDays: 1
  })
  yield* step({
    id: "f-ref-old",
    content: "Beta docs live on the old wiki",
    kind: "reference",
    sourceType: "harvest",
    scope: "project:beta",
    deliveryPolicy: "always"
  })
  yield* s.setReviewState("f-decision", "rejected")
  yield* s.supersede("f-ref-old", {
    id: "f-ref-new",
    content: "Beta docs live on the new wiki",
    kind: "reference",
    sourceType: "operator",
    deliveryPolicy: "always"
  })
  yield* TestClock.adjust("2 days")
})

interface FilterCase {
  readonly name: string
  readonly filters: MemoryQuery.MemoryFilters
  readonly expected: ReadonlyArray<string>
}

const filterCases: ReadonlyArray<FilterCase> = [
  {
    name: "no filter hides superseded records only",
    filters: {},
    expected: ["f-ref-new", "f-episode", "f-decision", "f-note", "f-fact", "f-profile"]
  },
  {
    name: "includeSuperseded shows superseded records",
    filters: { includeSuperseded: true },
    expected: ["f-ref-new", "f-ref-old", "f-episode", "f-decision", "f-note", "f-fact", "f-profile"]
  },
  {
    name: "deliverable excludes rejected, expired and superseded",
    filters: { deliverable: true },
    expected: ["f-ref-new", "f-note", "f-fact", "f-profile"]
  },
  {
    name: "deliverable wins over includeSuperseded",
    filters: { deliverable: true, includeSuperseded: true },
    expected: ["f-ref-new", "f-note", "f-fact", "f-profile"]
  },
  { name: "one scope", filters: { scopes: ["project:alpha"] }, expected: ["f-decision", "f-fact"] },
  {
    name: "several scopes",
    filters: { scopes: ["global", "session:s1"] },
    expected: ["f-episode", "f-note", "f-profile"]
  },
  {
    name: "scope with superseded records",
    filters: { scopes: ["project:beta"], includeSuperseded: true },
    expected: ["f-ref-new", "f-ref-old"]
  },
  { name: "kinds", filters: { kinds: ["fact", "note"] }, expected: ["f-note", "f-fact"] },
  {
    name: "every kind admits everything",
    filters: { kinds: MemoryRecord.MemoryKind.literals },
    expected: ["f-ref-new", "f-episode", "f-decision", "f-note", "f-fact", "f-profile"]
  },
  { name: "delivery policy always", filters: { deliveryPolicies: ["always"] }, expected: ["f-ref-new", "f-profile"] },
  { name: "delivery policy on_demand", filters: { deliveryPolicies: ["on_demand"] }, expected: ["f-note"] },
  { name: "review state confirmed", filters: { reviewStates: ["confirmed"] }, expected: ["f-ref-new", "f-profile"] },
  { name: "review state pending", filters: { reviewStates: ["pending"] }, expected: ["f-episode", "f-note", "f-fact"] },
  { name: "review state rejected", filters: { reviewStates: ["rejected"] }, expected: ["f-decision"] },
  {
    name: "review state with superseded records",
    filters: { reviewStates: ["pending"], includeSuperseded: true },
    expected: ["f-ref-old", "f-episode", "f-note", "f-fact"]
  },
  { name: "filters combine with AND", filters: { scopes: ["project:alpha"], kinds: ["fact"] }, expected: ["f-fact"] },
  { name: "scope and deliverable", filters: { scopes: ["global"], deliverable: true }, expected: ["f-profile"] },
  { name: "empty scopes admit nothing", filters: { scopes: [] }, expected: [] },
  { name: "empty kinds admit nothing", filters: { kinds: [] }, expected: [] },
  { name: "empty delivery policies admit nothing", filters: { deliveryPolicies: [] }, expected: [] },
  { name: "empty review states admit nothing", filters: { reviewStates: [] }, expected: [] },
  {
    name: "an empty array admits nothing even with includeSuperseded",
    filters: { scopes: [], includeSuperseded: true },
    expected: []
  }
]

const invalidInputs: ReadonlyArray<{ readonly field: string; readonly what: string; readonly input: unknown }> = [
  { field: "content", what: "blank content", input: { content: "   ", kind: "note" } },
  { field: "kind", what: "unknown kind", input: { content: "x", kind: "opinion" } },
  { field: "label", what: "label with a line break", input: { content: "x", kind: "note", label: "two\nlines" } },
  {
    field: "label",
    what: "label with a control character",
    input: { content: "x", kind: "note", label: "bell\u0007" }
  },
  { field: "label", what: "label over 64 characters", input: { content: "x", kind: "note", label: "x".repeat(65) } },
  { field: "scope", what: "malformed scope", input: { content: "x", kind: "note", scope: "team:a" } },
  { field: "sourceType", what: "unknown source type", input: { content: "x", kind: "note", sourceType: "rumour" } },
  {
    field: "deliveryPolicy",
    what: "unknown delivery policy",
    input: { content: "x", kind: "note", deliveryPolicy: "sometimes" }
  },
  { field: "expiresInDays", what: "negative expiry", input: { content: "x", kind: "note", expiresInDays: -1 } },
  { field: "id", what: "id with a space", input: { content: "x", kind: "note", id: "has space" } },
  { field: "tags", what: "empty tag", input: { content: "x", kind: "note", tags: [""] } }
]

const invalidQueries: ReadonlyArray<{ readonly name: string; readonly query: unknown }> = [
  { name: "limit 0", query: { limit: 0 } },
  { name: "limit above the maximum", query: { limit: MemoryQuery.MAX_LIMIT + 1 } },
  { name: "fractional limit", query: { limit: 2.5 } },
  { name: "malformed scope", query: { scopes: ["everywhere"] } },
  { name: "unknown kind", query: { kinds: ["opinion"] } },
  { name: "unknown review state", query: { reviewStates: ["maybe"] } }
]

const invalidCursors = ["not-a-cursor", "", "12~", "~mem-1", "abc~mem-1", "12~has space", "12.5~mem-1"]

export const tier1 = <RExtra, LE>(provide: Provide<RExtra, LE>) => {
  describe("round trip", () => {
    it.effect("every attribute set survives write, get and list unchanged", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        const input: MemoryRecord.MemoryWriteInput = {
          id: "full-1",
          content: "Doug's timezone is Europe/Lisbon",
          kind: "profile",
          label: "timezone",
          tags: ["travel-plans", "Zeitzone", "東京"],
          sourceType: "extracted",
          scope: "project:engram",
          deliveryPolicy: "always",
          epoch: "2025-Q1",
          expiresInDays: 2.5
        }
        const expected = {
          id: "full-1",
          content: "Doug's timezone is Europe/Lisbon",
          kind: "profile",
          label: "timezone",
          tags: ["travel-plans", "Zeitzone", "東京"],
          sourceType: "extracted",
          scope: "project:engram",
          deliveryPolicy: "always",
          reviewState: "pending",
          createdAt: iso(T0),
          epoch: "2025-Q1",
          expiresAt: iso(T0 + 2.5 * DAY)
        }
        const written = yield* s.write([input])
        expect(written.map(plain)).toEqual([expected])
        const got = yield* s.get(["full-1"])
        expect(got.records.map(plain)).toEqual([expected])
        expect(got.skipped).toBe(0)
        expect(got.records[0]!.trustTier).toBe(2)
        const listed = yield* s.list()
        expect(listed.records.map(plain)).toEqual([expected])
        expect(listed.skipped).toBe(0)
      }).pipe(provide))

    it.effect("every optional attribute left unset stays unset, and defaults are stamped", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        const [written] = yield* s.write([{ content: "Bare note", kind: "note" }])
        const expected = {
          id: "mem-000001",
          content: "Bare note",
          kind: "note",
          tags: [],
          sourceType: "unknown",
          scope: "global",
          deliveryPolicy: "retrieved",
          reviewState: "pending",
          createdAt: iso(T0)
        }
        expect(plain(written!)).toEqual(expected)
        const [got] = (yield* s.get(["mem-000001"])).records
        expect(plain(got!)).toEqual(expected)
        for (const field of optionalFields) expect(got![field], field).toBeUndefined()
        expect(got!.trustTier).toBe(1)
      }).pipe(provide))

    it.effect("trust tier and initial review state derive from the source type", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write(
          sourceTypes.map(({ sourceType }) => ({
            id: `src-${sourceType}`,
            content: sourceType,
            kind: "note" as const,
            sourceType
          }))
        )
        const got = yield* s.get(sourceTypes.map(({ sourceType }) => `src-${sourceType}`))
        expect(got.records.map((r) => [r.sourceType, r.trustTier, r.reviewState])).toEqual(
          sourceTypes.map(({ reviewState, sourceType, trustTier }) => [sourceType, trustTier, reviewState])
        )
      }).pipe(provide))

    it.effect("content, labels and tags are stored verbatim (no normalization, order kept)", () =>
      Effect.gen(function*() {
        const s = yield* store
        // "e" + combining acute is kept as two code points; quotes, wildcards and newlines survive.
        const content = "Line one\nLine two\t\"quoted\" 'single' back\\slash 100% _under_ ☕ 東京 cafe\u0301 \u{1F600}"
        const tags = ["zeta", "Alpha", "mu-1", "Café"]
        yield* s.write([{ id: "verbatim", content, kind: "note", label: "Café \"Ω\"", tags }])
        const [got] = (yield* s.get(["verbatim"])).records
        expect(got!.content).toBe(content)
        expect(got!.label).toBe("Café \"Ω\"")
        expect(got!.tags).toEqual(tags)
      }).pipe(provide))

    it.effect("the records of one write are stamped a millisecond apart in input order, and returned in it", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        const written = yield* s.write([
          { id: "z-last", content: "z", kind: "note" },
          { content: "generated", kind: "note" },
          { id: "a-first", content: "a", kind: "note" }
        ])
        expect(idsOf(written)).toEqual(["z-last", "mem-000001", "a-first"])
        expect(written.map((r) => DateTime.toEpochMillis(r.createdAt))).toEqual([T0, T0 + 1, T0 + 2])
      }).pipe(provide))

    it.effect("restore stores fully formed records verbatim, lifecycle and domain included", () =>
      Effect.gen(function*() {
        const s = yield* store
        const legacy = new MemoryRecord.MemoryRecord({
          id: "legacy-1",
          content: "Imported from v1",
          kind: "legacy",
          label: "origin",
          tags: ["import"],
          sourceType: "ingest",
          scope: "project:old",
          deliveryPolicy: "on_demand",
          reviewState: "confirmed",
          createdAt: DateTime.unsafeMake(T0 - 30 * DAY),
          epoch: "v1",
          expiresAt: DateTime.unsafeMake(T0 + DAY),
          invalidatedAt: DateTime.unsafeMake(T0 - DAY),
          invalidationReason: "superseded_by:legacy-2",
          supersededBy: "legacy-2",
          supersedes: "legacy-0",
          domain: "hot"
        })
        yield* s.restore([legacy])
        const got = yield* s.get(["legacy-1"])
        expect(got.records.map(plain)).toEqual([plain(legacy)])
        expect(got.records[0]!.trustTier).toBe(1)
      }).pipe(provide))
  })

  describe("create-only writes", () => {
    it.effect("rewriting an id fails with DuplicateMemoryId and leaves the stored record as it was", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([{ id: "a", content: "first", kind: "note" }])
        const error = yield* failure(s.write([{ id: "a", content: "second", kind: "fact" }]))
        expect(error._tag).toBe("DuplicateMemoryId")
        expect(error._tag === "DuplicateMemoryId" && error.id).toBe("a")
        const all = yield* listAll({ includeSuperseded: true })
        expect(all.records.map((r) => [r.id, r.content, r.kind])).toEqual([["a", "first", "note"]])
      }).pipe(provide))

    it.effect("restore is create-only too", () =>
      Effect.gen(function*() {
        const s = yield* store
        const [a] = yield* s.write([{ id: "a", content: "first", kind: "note" }])
        const error = yield* failure(s.restore([new MemoryRecord.MemoryRecord({ ...a!, content: "rewritten" })]))
        expect(error._tag).toBe("DuplicateMemoryId")
        expect((yield* s.get(["a"])).records[0]!.content).toBe("first")
      }).pipe(provide))

    it.effect("a successor may not take an existing id; the original stays current", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([{ id: "a", content: "a", kind: "note" }, { id: "b", content: "b", kind: "note" }])
        const before = (yield* listAll({ includeSuperseded: true })).records.map(plain)
        yield* TestClock.adjust("1 minute")
        const error = yield* failure(s.supersede("a", { id: "b", content: "b again", kind: "note" }))
        expect(error._tag).toBe("DuplicateMemoryId")
        expect((yield* listAll({ includeSuperseded: true })).records.map(plain)).toEqual(before)
        expect(idsOf((yield* listAll()).records)).toEqual(["b", "a"])
      }).pipe(provide))
  })

  describe("atomic batches", () => {
    it.effect("one invalid input stores nothing, and the error names its index and field", () =>
      Effect.gen(function*() {
        const s = yield* store
        const error = yield* failure(
          s.write([
            { id: "ok-1", content: "fine", kind: "note" },
            { id: "ok-2", content: "fine", kind: "note" },
            { id: "bad", content: "fine", kind: "note", label: "two\nlines" }
          ])
        )
        expect(error._tag).toBe("InvalidMemoryInput")
        if (error._tag === "InvalidMemoryInput") {
          expect(error.index).toBe(2)
          expect(error.problem).toContain("label")
        }
        expect((yield* listAll({ includeSuperseded: true })).records).toEqual([])
      }).pipe(provide))

    for (const { field, input, what } of invalidInputs) {
      it.effect(`a ${what} is reported by field (${field}) and index`, () =>
        Effect.gen(function*() {
          const s = yield* store
          // Deliberately invalid inputs, as an untyped caller (an HTTP body, a tool call) would send them.
          const inputs = [{ content: "fine", kind: "note" }, input] as unknown as ReadonlyArray<
            MemoryRecord.MemoryWriteInput
          >
          const error = yield* failure(s.write(inputs))
          expect(error._tag).toBe("InvalidMemoryInput")
          if (error._tag === "InvalidMemoryInput") {
            expect(error.index).toBe(1)
            expect(error.problem).toMatch(new RegExp(`\\b${field}\\b`))
          }
          expect((yield* listAll()).records).toEqual([])
        }).pipe(provide))
    }

    it.effect("an empty batch succeeds and stores nothing", () =>
      Effect.gen(function*() {
        const s = yield* store
        expect(yield* s.write([])).toEqual([])
        yield* s.restore([])
        expect((yield* listAll({ includeSuperseded: true })).records).toEqual([])
      }).pipe(provide))

    it.effect("an id repeated inside one batch stores nothing", () =>
      Effect.gen(function*() {
        const s = yield* store
        const error = yield* failure(
          s.write([
            { id: "x", content: "one", kind: "note" },
            { id: "y", content: "two", kind: "note" },
            { id: "x", content: "three", kind: "note" }
          ])
        )
        expect(error._tag).toBe("DuplicateMemoryId")
        expect(error._tag === "DuplicateMemoryId" && error.id).toBe("x")
        expect((yield* listAll()).records).toEqual([])
      }).pipe(provide))

    it.effect("an id already stored fails the whole batch; the new records are not stored", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([{ id: "old", content: "kept", kind: "note" }])
        const error = yield* failure(
          s.write([
            { id: "new-1", content: "new", kind: "note" },
            { id: "old", content: "clash", kind: "note" },
            { id: "new-2", content: "new", kind: "note" }
          ])
        )
        expect(error._tag).toBe("DuplicateMemoryId")
        expect(error._tag === "DuplicateMemoryId" && error.id).toBe("old")
        expect(idsOf((yield* listAll()).records)).toEqual(["old"])
        expect((yield* s.get(["new-1", "new-2"])).records).toEqual([])
      }).pipe(provide))

    it.effect("restore is atomic: one invalid record stores nothing", () =>
      Effect.gen(function*() {
        const s = yield* store
        const good = MemoryRecord.fromWriteInput({ content: "good", kind: "note" }, {
          id: "r-good",
          now: DateTime.unsafeMake(T0)
        })
        const bad = new MemoryRecord.MemoryRecord({ ...good, id: "r-bad", label: "two\nlines" }, {
          disableValidation: true
        })
        const error = yield* failure(s.restore([good, bad]))
        expect(error._tag).toBe("InvalidMemoryInput")
        if (error._tag === "InvalidMemoryInput") {
          expect(error.index).toBe(1)
          expect(error.problem).toContain("label")
        }
        expect((yield* listAll({ includeSuperseded: true })).records).toEqual([])
      }).pipe(provide))
  })

  describe("listing order", () => {
    it.effect("a batch lists its last input first, whatever the ids: [a, b, c] limited to 2 is [c, b]", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        yield* s.write([
          { id: "a", content: "a", kind: "note" },
          { id: "b", content: "b", kind: "note" },
          { id: "c", content: "c", kind: "note" }
        ])
        const page = yield* s.list({ limit: 2 })
        expect(idsOf(page.records)).toEqual(["c", "b"])
      }).pipe(provide))

    it.effect("writes at one instant break the tie by id, not by the order they were made in", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* writeEach(s, [
          { id: "c", content: "c", kind: "note" },
          { id: "b", content: "b", kind: "note" },
          { id: "a", content: "a", kind: "note" }
        ])
        expect(idsOf((yield* s.list({ limit: 2 })).records)).toEqual(["a", "b"])
        yield* TestClock.adjust("1 millis")
        yield* s.write([{ content: "gen 1", kind: "note" }, { content: "gen 2", kind: "note" }])
        expect(idsOf((yield* s.list({ limit: 3 })).records)).toEqual(["mem-000002", "mem-000001", "a"])
      }).pipe(provide))

    it.effect("newest first, down to the millisecond", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        yield* s.write([{ id: "first", content: "1", kind: "note" }])
        yield* TestClock.adjust("1 second")
        yield* s.write([{ id: "second", content: "2", kind: "note" }])
        yield* TestClock.adjust("1 millis")
        yield* s.write([{ id: "third", content: "3", kind: "note" }])
        expect(idsOf((yield* s.list()).records)).toEqual(["third", "second", "first"])
      }).pipe(provide))

    it.effect("ids compare by raw code units, never by locale", () =>
      Effect.gen(function*() {
        const s = yield* store
        const ids = ["a_1", "a1", "Z9", "a.1", "10", "a-1", "a:1", "9", "B", "a", "b"]
        yield* writeEach(s, ids.map((id) => ({ id, content: id, kind: "note" as const })))
        // Digits < upper case < lower case; '-' < '.' < ':' < '_'; "10" < "9".
        expect(idsOf((yield* listAll()).records)).toEqual([
          "10",
          "9",
          "B",
          "Z9",
          "a",
          "a-1",
          "a.1",
          "a1",
          "a:1",
          "a_1",
          "b"
        ])
      }).pipe(provide))
  })

  describe("cursors", () => {
    const writeMixedTimes = Effect.gen(function*() {
      const s = yield* store
      yield* TestClock.setTime(T0)
      // One write each, so that records written at one instant tie and the tie goes by id.
      yield* writeEach(s, [
        { id: "t0-c", content: "x", kind: "note" },
        { id: "t0-a", content: "x", kind: "note", scope: "project:alpha" },
        { id: "t0-b", content: "x", kind: "note" }
      ])
      yield* TestClock.adjust("1 millis")
      yield* s.write([{ id: "t1-a", content: "x", kind: "fact", scope: "project:alpha" }])
      yield* TestClock.adjust("1 hour")
      yield* writeEach(s, [
        { id: "t2-b", content: "x", kind: "fact" },
        { id: "t2-a", content: "x", kind: "note", scope: "project:alpha" },
        { id: "t2-d", content: "x", kind: "fact" },
        { id: "t2-c", content: "x", kind: "note" }
      ])
    })
    const everything = ["t2-a", "t2-b", "t2-c", "t2-d", "t1-a", "t0-a", "t0-b", "t0-c"]

    for (const limit of [1, 2, 3, 4, 7, 8, 9]) {
      it.effect(`paging with limit ${limit} returns every record exactly once, in order`, () =>
        Effect.gen(function*() {
          yield* writeMixedTimes
          const pages = yield* pageThrough({ limit })
          expect(pages.flatMap((page) => idsOf(page.records))).toEqual(everything)
          for (const page of pages) expect(page.records.length).toBeLessThanOrEqual(limit)
          // A page shorter than the limit is the last one.
          for (const page of pages.slice(0, -1)) expect(page.records.length).toBe(limit)
        }).pipe(provide))
    }

    it.effect("paging with filters pages through the filtered records only", () =>
      Effect.gen(function*() {
        yield* writeMixedTimes
        const pages = yield* pageThrough({ limit: 1, scopes: ["project:alpha"] })
        expect(pages.flatMap((page) => idsOf(page.records))).toEqual(["t2-a", "t1-a", "t0-a"])
        const facts = yield* pageThrough({ limit: 2, kinds: ["fact"] })
        expect(facts.flatMap((page) => idsOf(page.records))).toEqual(["t2-b", "t2-d", "t1-a"])
      }).pipe(provide))

    it.effect("a cursor keeps its place while newer records are written", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* writeMixedTimes
        const first = yield* s.list({ limit: 3 })
        expect(idsOf(first.records)).toEqual(["t2-a", "t2-b", "t2-c"])
        yield* TestClock.adjust("1 second")
        yield* s.write([{ id: "newest", content: "x", kind: "note" }, { id: "t2-bb", content: "x", kind: "note" }])
        const second = yield* s.list({ limit: 3, cursor: first.nextCursor! })
        expect(idsOf(second.records)).toEqual(["t2-d", "t1-a", "t0-a"])
      }).pipe(provide))

    it.effect("the last page carries no cursor", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* writeMixedTimes
        const page = yield* s.list({ limit: 100 })
        expect(page.records.length).toBe(8)
        expect(page.nextCursor).toBeUndefined()
        expect((yield* s.list({ limit: 7 })).nextCursor).toBeDefined()
      }).pipe(provide))

    for (const cursor of invalidCursors) {
      it.effect(`cursor ${JSON.stringify(cursor)} fails with InvalidCursor`, () =>
        Effect.gen(function*() {
          const s = yield* store
          yield* s.write([{ id: "a", content: "x", kind: "note" }])
          const error = yield* failure(s.list({ cursor }))
          expect(error._tag).toBe("InvalidCursor")
        }).pipe(provide))
    }
  })

  describe("filters", () => {
    for (const { expected, filters, name } of filterCases) {
      it.effect(name, () =>
        Effect.gen(function*() {
          yield* writeFilterFixture
          expect(idsOf((yield* listAll(filters)).records)).toEqual(expected)
        }).pipe(provide))
    }

    it.effect("an expiry takes effect at its instant, not before", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        yield* s.write([{ id: "short", content: "x", kind: "note", expiresInDays: 1 }])
        yield* TestClock.adjust(DAY - 1)
        expect(idsOf((yield* listAll({ deliverable: true })).records)).toEqual(["short"])
        yield* TestClock.adjust(1)
        expect(idsOf((yield* listAll({ deliverable: true })).records)).toEqual([])
        expect(idsOf((yield* listAll()).records)).toEqual(["short"])
      }).pipe(provide))

    for (const { name, query } of invalidQueries) {
      it.effect(`a listing with ${name} fails with InvalidMemoryQuery`, () =>
        Effect.gen(function*() {
          const s = yield* store
          const error = yield* failure(s.list(query as MemoryQuery.ListQuery))
          expect(error._tag).toBe("InvalidMemoryQuery")
        }).pipe(provide))
    }
  })

  describe("scope isolation", () => {
    const writeScopes = Effect.gen(function*() {
      const s = yield* store
      const scopes = ["project:alpha", "project:alpha2", "project:Alpha", "project:alp", "session:alpha", "global"]
      yield* s.write(
        scopes.map((scope, i) => ({
          id: `s${i}-${scope.replace(":", "-")}`,
          content: `Shared words in ${scope}`,
          kind: "note" as const,
          scope
        }))
      )
      yield* s.write([{ id: "s9-alpha", content: "Another alpha record", kind: "fact", scope: "project:alpha" }])
    })

    it.effect("a listing returns only the scopes asked for, matched exactly", () =>
      Effect.gen(function*() {
        yield* writeScopes
        expect(sortedIds((yield* listAll({ scopes: ["project:alpha"] })).records)).toEqual([
          "s0-project-alpha",
          "s9-alpha"
        ])
        expect(sortedIds((yield* listAll({ scopes: ["project:Alpha", "session:alpha"] })).records)).toEqual([
          "s2-project-Alpha",
          "s4-session-alpha"
        ])
        expect((yield* listAll({ scopes: ["project:nobody"] })).records).toEqual([])
      }).pipe(provide))

    it.effect("paging inside one scope never crosses into another", () =>
      Effect.gen(function*() {
        yield* writeScopes
        const pages = yield* pageThrough({ limit: 1, scopes: ["project:alpha"] })
        expect(pages.flatMap((page) => page.records.map((r) => r.scope))).toEqual(["project:alpha", "project:alpha"])
      }).pipe(provide))

    it.effect("get with scopes leaves out records of other scopes, in the order asked", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* writeScopes
        const ids = ["s9-alpha", "s1-project-alpha2", "s5-global", "unknown", "s0-project-alpha", "s2-project-Alpha"]
        expect(idsOf((yield* s.get(ids, { scopes: ["project:alpha"] })).records)).toEqual([
          "s9-alpha",
          "s0-project-alpha"
        ])
        expect(idsOf((yield* s.get(ids, { scopes: [] })).records)).toEqual([])
        expect(idsOf((yield* s.get(ids)).records)).toEqual([
          "s9-alpha",
          "s1-project-alpha2",
          "s5-global",
          "s0-project-alpha",
          "s2-project-Alpha"
        ])
        expect((yield* s.get([])).records).toEqual([])
      }).pipe(provide))
  })

  describe("lifecycle", () => {
    it.effect("setReviewState changes the review state and nothing else", () =>
      Effect.gen(function*() {
        const s = yield* store
        const [before] = yield* s.write([{ id: "r", content: "Agent guess", kind: "fact", sourceType: "extracted" }])
        yield* TestClock.adjust("1 hour")
        const confirmed = yield* s.setReviewState("r", "confirmed")
        expect(plain(confirmed)).toEqual({ ...plain(before!), reviewState: "confirmed" })
        expect((yield* s.get(["r"])).records.map(plain)).toEqual([plain(confirmed)])
        yield* s.setReviewState("r", "rejected")
        expect(idsOf((yield* listAll({ deliverable: true })).records)).toEqual([])
        expect(idsOf((yield* listAll({ reviewStates: ["rejected"] })).records)).toEqual(["r"])
      }).pipe(provide))

    it.effect("setReviewState on an unknown id fails with MemoryNotFound", () =>
      Effect.gen(function*() {
        const s = yield* store
        const error = yield* failure(s.setReviewState("ghost", "confirmed"))
        expect(error._tag).toBe("MemoryNotFound")
        expect(error._tag === "MemoryNotFound" && error.id).toBe("ghost")
      }).pipe(provide))

    it.effect("supersede links successor and original and hides the original by default", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        const [original] = yield* s.write([
          { id: "tz-1", content: "Doug lives in Lisbon", kind: "profile", label: "home", scope: "project:p" }
        ])
        yield* TestClock.adjust("1 minute")
        const result = yield* s.supersede("tz-1", { content: "Doug lives in Porto", kind: "profile", label: "home" })
        const successorId = result.successor.id
        expect(successorId).toBe("mem-000001")
        expect(plain(result.successor)).toEqual({
          id: successorId,
          content: "Doug lives in Porto",
          kind: "profile",
          label: "home",
          tags: [],
          sourceType: "unknown",
          scope: "project:p",
          deliveryPolicy: "retrieved",
          reviewState: "pending",
          createdAt: iso(T0 + 60_000),
          supersedes: "tz-1"
        })
        const superseded = {
          ...plain(original!),
          invalidatedAt: iso(T0 + 60_000),
          invalidationReason: `superseded_by:${successorId}`,
          supersededBy: successorId
        }
        expect(plain(result.superseded)).toEqual(superseded)
        expect((yield* s.get(["tz-1", successorId])).records.map(plain)).toEqual([superseded, plain(result.successor)])
        expect(idsOf((yield* listAll()).records)).toEqual([successorId])
        expect(idsOf((yield* listAll({ includeSuperseded: true })).records)).toEqual([successorId, "tz-1"])
        expect(idsOf((yield* listAll({ deliverable: true })).records)).toEqual([successorId])
      }).pipe(provide))

    it.effect("a successor may name its own scope", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([{ id: "old", content: "x", kind: "note", scope: "session:a" }])
        const { successor } = yield* s.supersede("old", { id: "new", content: "y", kind: "note", scope: "global" })
        expect(successor.scope).toBe("global")
      }).pipe(provide))

    it.effect("superseding twice fails with MemoryConflict and changes nothing", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([{ id: "v1", content: "one", kind: "fact" }])
        yield* s.supersede("v1", { id: "v2", content: "two", kind: "fact" })
        const before = (yield* listAll({ includeSuperseded: true })).records.map(plain)
        yield* TestClock.adjust("1 minute")
        const error = yield* failure(s.supersede("v1", { id: "v3", content: "three", kind: "fact" }))
        expect(error._tag).toBe("MemoryConflict")
        expect(error._tag === "MemoryConflict" && error.id).toBe("v1")
        expect((yield* listAll({ includeSuperseded: true })).records.map(plain)).toEqual(before)
      }).pipe(provide))

    it.effect("superseding an unknown id fails with MemoryNotFound and stores nothing", () =>
      Effect.gen(function*() {
        const s = yield* store
        const error = yield* failure(s.supersede("ghost", { id: "heir", content: "x", kind: "note" }))
        expect(error._tag).toBe("MemoryNotFound")
        expect((yield* listAll({ includeSuperseded: true })).records).toEqual([])
      }).pipe(provide))

    it.effect("an invalid successor fails with InvalidMemoryInput and the original stays current", () =>
      Effect.gen(function*() {
        const s = yield* store
        const [original] = yield* s.write([{ id: "keep", content: "x", kind: "note" }])
        const error = yield* failure(s.supersede("keep", { content: "y", kind: "note", label: "a\nb" }))
        expect(error._tag).toBe("InvalidMemoryInput")
        expect(error._tag === "InvalidMemoryInput" && error.problem).toContain("label")
        expect((yield* listAll({ includeSuperseded: true })).records.map(plain)).toEqual([plain(original!)])
      }).pipe(provide))

    it.effect("expire ends delivery now but keeps the record listed", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        yield* s.write([{ id: "e", content: "x", kind: "note" }])
        yield* TestClock.adjust("5 minutes")
        const expired = yield* s.expire("e")
        expect(expired.expiresAt && DateTime.toEpochMillis(expired.expiresAt)).toBe(T0 + 300_000)
        expect((yield* s.get(["e"])).records.map(plain)).toEqual([plain(expired)])
        expect(idsOf((yield* listAll()).records)).toEqual(["e"])
        expect(idsOf((yield* listAll({ deliverable: true })).records)).toEqual([])
      }).pipe(provide))

    it.effect("expire keeps an earlier expiry", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        yield* s.write([{ id: "e", content: "x", kind: "note", expiresInDays: 1 }])
        yield* TestClock.adjust("3 days")
        const expired = yield* s.expire("e")
        expect(expired.expiresAt && DateTime.toEpochMillis(expired.expiresAt)).toBe(T0 + DAY)
      }).pipe(provide))

    it.effect("expire on an unknown id fails with MemoryNotFound", () =>
      Effect.gen(function*() {
        const s = yield* store
        const error = yield* failure(s.expire("ghost"))
        expect(error._tag).toBe("MemoryNotFound")
      }).pipe(provide))
  })

  describe("capabilities", () => {
    it.effect("declares its search capability", () =>
      Effect.gen(function*() {
        const s = yield* store
        expect(["keyword", "none"]).toContain(s.capabilities.search)
      }).pipe(provide))
  })
}
