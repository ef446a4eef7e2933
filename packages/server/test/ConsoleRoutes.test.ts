/**
 * The routes the console is built on: browse (every lifecycle state, sorted pages with totals,
 * past the search limit), bulk review (all or nothing, never an expired record), the record's
 * lifecycle beside it, the scopes a session read and the records an overlay report names.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import { seed, seedSession, serve, type Served } from "./utilities.js"

interface Row {
  readonly record: { id: string; label?: string; content: string; reviewState: string }
  readonly state: string
  readonly trustTier: number
  readonly flagged: boolean
  readonly score: number | null
  readonly promotions: ReadonlyArray<unknown>
}
interface Page {
  readonly total: number
  readonly offset: number
  readonly truncated: boolean
  readonly rows: ReadonlyArray<Row>
}

const browse = (served: Served, query: string, token = served.tokens.a) =>
  Effect.map(served.request("GET", `/api/memories/browse?${query}`, { token }), (answer) => {
    expect(answer.status, answer.text).toBe(200)
    return answer.json as Page
  })

const store = <A, E>(served: Served, f: (store: MemoryStore.Service) => Effect.Effect<A, E>) =>
  Effect.provide(Effect.flatMap(MemoryStore.MemoryStore, f), served.context).pipe(Effect.orDie)

/** 30 records of project:a that all mention "garden" (half pending), one superseded, one expired; two of project:b. */
const seeded = Effect.gen(function*() {
  const served = yield* serve
  yield* seed(
    served,
    Array.from({ length: 30 }, (_, i) => ({
      id: `a-${String(i).padStart(2, "0")}`,
      content: `garden note ${i}`,
      kind: "note" as const,
      label: `label-${String(29 - i).padStart(2, "0")}`,
      scope: "project:a",
      sourceType: i % 2 === 0 ? "operator" as const : "conversation" as const
    }))
  )
  yield* seed(served, [
    { id: "a-old", content: "garden gate is blue", kind: "fact", scope: "project:a", sourceType: "conversation" },
    { id: "a-stale", content: "garden hose is green", kind: "fact", scope: "project:a", sourceType: "conversation" },
    { id: "b-1", content: "garden secret of b", kind: "fact", scope: "project:b" },
    { id: "b-2", content: "garden secret of b", kind: "fact", scope: "project:b" }
  ])
  yield* store(served, (s) => s.supersede("a-old", { content: "garden gate is red", kind: "fact", scope: "project:a" }))
  yield* store(served, (s) => s.expire("a-stale"))
  return served
})

describe("console routes", () => {
  it.live("browse: totals past the search limit, pages, sorts, every lifecycle state, the token's scopes only", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* seeded
      // 30 notes + the superseded gate, its successor and the expired hose: 33, none of project:b.
      const first = yield* browse(served, "limit=10")
      expect([first.total, first.offset, first.rows.length, first.truncated]).toEqual([33, 0, 10, false])
      const pages = [first]
      for (let offset = 10; offset < 33; offset += 10) pages.push(yield* browse(served, `limit=10&offset=${offset}`))
      const ids = pages.flatMap((page) => page.rows.map((row) => row.record.id))
      expect(new Set(ids).size).toBe(33)
      expect(ids.some((id) => id.startsWith("b-"))).toBe(false)
      // A search past the default search limit of 20 counts every hit.
      const searched = yield* browse(served, "q=garden&limit=5")
      expect([searched.total, searched.rows.length]).toEqual([33, 5])
      expect(searched.rows.every((row) => row.score !== null)).toBe(true)
      // Sorted by label, ascending and descending (records without a label sort first).
      const byLabel = yield* browse(served, "sort=label&order=asc&limit=4&kind=note")
      expect(byLabel.rows.map((row) => row.record.label)).toEqual(["label-00", "label-01", "label-02", "label-03"])
      const byLabelDown = yield* browse(served, "sort=label&order=desc&limit=2&kind=note")
      expect(byLabelDown.rows.map((row) => row.record.label)).toEqual(["label-29", "label-28"])
      // Each state is its own; expired and superseded are never "pending".
      const states = Object.fromEntries(
        (yield* browse(served, "limit=200")).rows.map((row) => [row.record.id, row.state])
      )
      expect(states["a-old"]).toBe("superseded")
      expect(states["a-stale"]).toBe("expired")
      expect(states["a-00"]).toBe("confirmed")
      expect(states["a-01"]).toBe("pending")
      const pending = yield* browse(served, "state=pending&limit=200")
      // The 15 conversation notes (tier 2) and the gate's successor (no source given: tier 1).
      expect(pending.total).toBe(16)
      expect(pending.rows.map((row) => row.record.id)).not.toContain("a-stale")
      expect(pending.rows.map((row) => row.trustTier).sort()).toEqual([1, ...Array(15).fill(2)])
      expect(pending.rows.some((row) => row.flagged)).toBe(false)
      const expired = yield* browse(served, "state=expired")
      expect(expired.rows.map((row) => row.record.id)).toEqual(["a-stale"])
      // Another scope is not found, as everywhere.
      expect((yield* served.request("GET", "/api/memories/browse?scope=project:b", { token: served.tokens.a })).status)
        .toBe(404)
      const detail = yield* served.request("GET", "/api/memories/a-old", { token: served.tokens.ro })
      expect(detail.json).toMatchObject({ state: "superseded", trustTier: 2, flagged: false })
      expect((yield* served.request("GET", "/api/memories/a-stale", { token: served.tokens.ro })).json)
        .toMatchObject({ state: "expired" })
    })))

  it.live("bulk review: all the ids or none; an expired id refuses the batch; read-only and foreign ids refused", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* seeded
      const review = (body: unknown, token = served.tokens.a) =>
        served.request("POST", "/api/memories/review", { token, body })
      const refused = yield* review({ ids: ["a-01", "a-stale"], state: "confirmed" })
      expect(refused.status).toBe(409)
      expect(refused.text).toContain("a-stale is expired")
      expect((yield* review({ ids: ["a-01", "b-1"], state: "confirmed" })).status).toBe(404)
      expect((yield* review({ ids: ["a-01"], state: "confirmed" }, served.tokens.ro)).status).toBe(403)
      expect((yield* review({ ids: [], state: "confirmed" })).status).toBe(400)
      const reviewState = (id: string) =>
        store(served, (s) => Effect.map(s.get([id]), ({ records }) => records[0]!.reviewState))
      expect(yield* reviewState("a-01")).toBe("pending")
      const done = yield* review({ ids: ["a-01", "a-03", "a-05"], state: "confirmed" })
      expect(done.status, done.text).toBe(200)
      expect((done.json as { records: Array<{ reviewState: string }> }).records.map((r) => r.reviewState))
        .toEqual(["confirmed", "confirmed", "confirmed"])
      expect([yield* reviewState("a-01"), yield* reviewState("a-03"), yield* reviewState("a-07")])
        .toEqual(["confirmed", "confirmed", "pending"])
      expect((yield* browse(served, "state=pending&limit=200")).total).toBe(13)
    })))

  it.live("sessions name the scopes they read; the agent answer carries the records its report names", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      yield* seed(served, [{ id: "a-fact", content: "the alpha vault code", kind: "fact", scope: "project:a" }])
      yield* seedSession(served, { sessionId: "s-a", scope: "project:a", secret: "alpha", memoryId: "a-fact" })
      const sessions = yield* served.request("GET", "/api/sessions", { token: served.tokens.a })
      expect((sessions.json as { sessions: Array<{ sessionId: string; scopes: Array<string> }> }).sessions)
        .toEqual([expect.objectContaining({ sessionId: "s-a", scopes: ["project:a"], calls: 1 })])
      const created = yield* served.request("POST", "/api/memories", {
        token: served.tokens.a,
        body: { content: "Reply in French", kind: "standing", label: "language", sourceType: "conversation" }
      })
      const id = (created.json as { record: { id: string } }).record.id
      const agent = yield* served.request("GET", "/api/agent", { token: served.tokens.a })
      const answer = agent.json as {
        report: { outcomes: Array<{ recordId: string; reason?: string }> }
        records: Array<{ id: string; content: string }>
      }
      expect(answer.report.outcomes).toEqual([expect.objectContaining({ recordId: id, reason: "review-required" })])
      expect(answer.records.map((r) => [r.id, r.content])).toEqual([[id, "Reply in French"]])
    })))
})
