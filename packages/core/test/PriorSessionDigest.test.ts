import { describe, expect, it } from "@effect/vitest"
import { MemoryRecord, MemoryStore, PriorSessionDigest, SearchTokenizer } from "@engram/core"
import { DateTime, Effect, FastCheck as fc, Option } from "effect"

const { PriorSession, selectDigest } = PriorSessionDigest

const session = (sessionId: string, iso: string, summary: string) =>
  new PriorSession({ sessionId, at: DateTime.unsafeMake(iso), summary })

const candidates = [
  session("s-1", "2025-01-01T00:00:00Z", "Set up the Postgres replica"),
  session("s-2", "2025-01-05T00:00:00Z", "Wrote the onboarding guide"),
  session("s-3", "2025-01-09T00:00:00Z", "Tuned Postgres indexes for search"),
  session("s-4", "2025-01-12T00:00:00Z", "Planned the team offsite"),
  session("s-5", "2025-01-15T00:00:00Z", "Reviewed the billing dashboard")
]

const ids = (entries: ReadonlyArray<PriorSessionDigest.DigestEntry>) => entries.map((e) => e.sessionId)

describe("selectDigest", () => {
  it("defaults to the newest prior sessions, three of them, each with its id and timestamp", () => {
    const digest = selectDigest(candidates)
    expect(ids(digest)).toEqual(["s-5", "s-4", "s-3"])
    expect(DateTime.formatIso(digest[0]!.at)).toBe("2025-01-15T00:00:00.000Z")
    expect(PriorSessionDigest.DEFAULT_DIGEST_MODE).toBe("newest")
  })

  it("never offers a session as its own prior session", () => {
    expect(ids(selectDigest(candidates, { currentSessionId: "s-5" }))).toEqual(["s-4", "s-3", "s-2"])
    expect(ids(selectDigest(candidates, { mode: "relevant", query: "postgres", currentSessionId: "s-3" }))).toEqual([
      "s-1"
    ])
  })

  it("relevant keeps only sessions sharing a whole token with the query, most overlap first", () => {
    const digest = selectDigest(candidates, { mode: "relevant", query: "Which POSTGRES indexes did we tune?" })
    expect(ids(digest)).toEqual(["s-3", "s-1"])
    // s-3 shares "postgres", "indexes" and "tune" ("tuned" and "tune" are one word form); s-1 shares "postgres".
    expect(digest.map((e) => e.rank)).toEqual([3, 1])
  })

  it("relevant returns nothing without a query or without overlap; off returns nothing", () => {
    expect(selectDigest(candidates, { mode: "relevant" })).toEqual([])
    expect(selectDigest(candidates, { mode: "relevant", query: "kubernetes" })).toEqual([])
    expect(selectDigest(candidates, { mode: "relevant", query: "post" })).toEqual([]) // whole tokens only
    expect(selectDigest(candidates, { mode: "off", query: "postgres" })).toEqual([])
  })

  it("ranks newest entries by overlap too, so the budget can shed the least related first", () => {
    const digest = selectDigest(candidates, { query: "billing dashboard", limit: 2 })
    expect(digest.map((e) => [e.sessionId, e.rank])).toEqual([["s-5", 2], ["s-4", 0]])
  })

  it("keeps a session's newest summary when it is offered twice", () => {
    const digest = selectDigest([...candidates, session("s-1", "2025-01-20T00:00:00Z", "Promoted the replica")], {
      limit: 10
    })
    expect(ids(digest)).toEqual(["s-1", "s-5", "s-4", "s-3", "s-2"])
    expect(digest[0]!.summary).toBe("Promoted the replica")
  })

  it.prop(
    "does not depend on the candidates' order",
    [fc.shuffledSubarray(candidates, { minLength: 0 }), fc.constantFrom("newest" as const, "relevant" as const)],
    ([shuffled, mode]) => {
      const sorted = [...shuffled].sort((a, b) => a.sessionId.localeCompare(b.sessionId))
      const options = { mode, query: "postgres guide offsite" }
      expect(ids(selectDigest(shuffled, options))).toEqual(ids(selectDigest(sorted, options)))
    }
  )
})

describe("the relevance predicate agrees with store search", () => {
  const hostile = fc.string({
    unit: fc.constantFrom("a", "b", "É", "é", "ß", " ", "-", ".", "名", "字", "Σ", "ς", "1", "\n"),
    maxLength: 12
  })

  it.effect.prop(
    "a session summary matches a query exactly when the store's keyword search finds its record",
    [fc.array(hostile.filter((s) => s.trim().length > 0), { minLength: 1, maxLength: 6 }), hostile],
    ([summaries, query]) =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        const written = yield* store.write(
          summaries.map((content, i) => ({
            content,
            kind: "episode" as const,
            scope: `session:s-${i}`,
            sourceType: "operator" as const
          }))
        )
        // A runtime searches for the query's content words (stopwords such as "a" left out).
        const words = PriorSessionDigest.contentTokens(query).join(" ")
        const found = new Set(
          words === "" ? [] : (yield* store.search(words, { limit: 10_000 })).hits.map((h) => h.record.id)
        )
        for (const record of written) {
          const prior = Option.getOrThrow(PriorSessionDigest.fromRecord(record))
          expect(PriorSessionDigest.isRelevant(query, PriorSessionDigest.matchTextOf(prior))).toBe(found.has(record.id))
        }
        const relevant = selectDigest(
          written.map((r) => Option.getOrThrow(PriorSessionDigest.fromRecord(r))),
          { mode: "relevant", query, limit: 100 }
        )
        expect(relevant.map((e) => e.memoryId).sort()).toEqual([...found].sort())
      }).pipe(Effect.provide(MemoryStore.layerMemory)),
    { fastCheck: { numRuns: 60 } }
  )

  it("reads a session summary from a session-scoped record, and nothing from other scopes", () => {
    const at = DateTime.unsafeMake("2025-01-01T00:00:00Z")
    const record = MemoryRecord.fromWriteInput(
      { content: "Fixed the login bug", kind: "episode", label: "auth", tags: ["oauth"], scope: "session:s-9" },
      { id: "m-1", now: at }
    )
    const prior = Option.getOrThrow(PriorSessionDigest.fromRecord(record))
    expect(prior).toMatchObject({ sessionId: "s-9", summary: "Fixed the login bug", memoryId: "m-1" })
    expect(prior.matchText).toBe(SearchTokenizer.searchableText(record))
    expect(PriorSessionDigest.isRelevant("oauth", PriorSessionDigest.matchTextOf(prior))).toBe(true)
    const global = MemoryRecord.fromWriteInput({ content: "x", kind: "episode" }, { id: "m-2", now: at })
    expect(Option.isNone(PriorSessionDigest.fromRecord(global))).toBe(true)
  })

  it("reads a summary tagged with its session in any scope; the session tag is not matched on", () => {
    const at = DateTime.unsafeMake("2025-01-01T00:00:00Z")
    const record = MemoryRecord.fromWriteInput(
      {
        content: "Fixed the login bug",
        kind: "episode",
        tags: ["oauth", PriorSessionDigest.sessionTag("s-9")],
        scope: "project:a"
      },
      { id: "m-1", now: at }
    )
    const prior = Option.getOrThrow(PriorSessionDigest.fromRecord(record))
    expect(prior).toMatchObject({ sessionId: "s-9", summary: "Fixed the login bug", memoryId: "m-1" })
    expect(PriorSessionDigest.isRelevant("oauth", PriorSessionDigest.matchTextOf(prior))).toBe(true)
    expect(PriorSessionDigest.isRelevant("session", PriorSessionDigest.matchTextOf(prior))).toBe(false)
  })
})

describe("stopwords", () => {
  it("are the function words as the tokenizer folds them", () => {
    expect([...PriorSessionDigest.STOPWORDS].sort()).toEqual(
      [...new Set(PriorSessionDigest.FUNCTION_WORDS.flatMap((word) => SearchTokenizer.tokenize(word)))].sort()
    )
  })

  it.prop(
    "relevance never counts a stopword: adding stopwords to a query changes no rank",
    [
      fc.string({ unit: fc.constantFrom("a", "b", "c", "x", "y", " "), maxLength: 20 }),
      fc.string({ unit: fc.constantFrom("a", "b", "c", "x", "y", " "), maxLength: 20 }),
      fc.array(fc.constantFrom(...PriorSessionDigest.STOPWORDS), { maxLength: 4 })
    ],
    ([query, text, stop]) => {
      expect(PriorSessionDigest.relevance([query, ...stop].join(" "), `${text} ${stop.join(" ")}`)).toBe(
        PriorSessionDigest.relevance(query, text)
      )
      expect(PriorSessionDigest.relevance(stop.join(" "), `${text} ${stop.join(" ")}`)).toBe(0)
    }
  )

  it("a summary that shares only \"the\" with the query is not relevant", () => {
    const at = DateTime.unsafeMake("2025-01-01T00:00:00Z")
    const candidates = [
      new PriorSessionDigest.PriorSession({ sessionId: "s-1", at, summary: "Went over the garden" }),
      new PriorSessionDigest.PriorSession({ sessionId: "s-2", at, summary: "Deploy of the API" })
    ]
    const chosen = selectDigest(candidates, { mode: "relevant", query: "what is the deploy status" })
    expect(chosen.map((entry) => [entry.sessionId, entry.rank])).toEqual([["s-2", 1]])
  })
})
