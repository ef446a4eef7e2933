/**
 * Every kind of statement a memory store runs, driven through the store's own API over a large
 * table filled by `explainFill` (what the EXPLAIN tests plan): writes, look-ups, every listing
 * (scopes, always-on as `project()` reads it, a review queue, kinds, delivery policies, a session's
 * scope, a cursor's next page), searches (question-shaped and scoped, short and unscoped, a tail
 * tier, newest first), neighbours, the lifecycle updates, forgetting and tombstones.
 */
import { MemoryStore } from "@engram/core"
import * as Effect from "effect/Effect"

/** Rows `explainFill` describes: `m0000001` … with these shapes. */
export const EXPLAIN_ROWS = 100_000

export const exerciseStore = Effect.gen(function*() {
  const store = yield* MemoryStore.MemoryStore
  const scopes = ["global", "project:p3"]
  const [written, , episode] = yield* store.write([
    { content: "a fresh record about w17 and v3", kind: "fact", scope: "project:p3" },
    { content: "another fresh record", kind: "note", scope: "global" },
    { content: "a turn written without a position", kind: "episode", scope: "project:p3" }
  ])
  yield* store.get(["m0000042", "m0000043", written!.id])
  yield* store.get(["m0000042"], { scopes })
  yield* store.list({})
  const page = yield* store.list({ scopes, limit: 20 })
  yield* store.list({ scopes, limit: 20, ...(page.nextCursor === undefined ? {} : { cursor: page.nextCursor }) })
  yield* store.list({ scopes: ["project:p3"], limit: 20 })
  yield* store.list({ scopes, deliveryPolicies: ["always"], deliverable: true, limit: 100 })
  yield* store.list({ reviewStates: ["pending"], limit: 50 })
  yield* store.list({ scopes, reviewStates: ["pending"], limit: 50 })
  yield* store.list({ kinds: ["fact"], limit: 50 })
  yield* store.list({ deliveryPolicies: ["on_demand"], limit: 50 })
  yield* store.list({ scopes: ["session:s7"], limit: 50 })
  yield* store.list({ includeSuperseded: true, limit: 50 })
  yield* store.search("what did w17 say about v3 record common", { scopes, deliverable: true, limit: 20 })
  yield* store.search("w17 v3", { limit: 20 })
  yield* store.search("v5", { limit: 20 })
  yield* store.search("common record", { scopes, deliverable: true, limit: 20 })
  yield* store.search("w17 common", { limit: 20, order: "newest" })
  yield* store.neighbours({
    positions: [{ scope: "project:p3", thread: "t70", turn: 5 }, { scope: "global", thread: "t2", turn: 10 }],
    window: 2
  })
  // Around records: their places looked up by id, a written thread's and the write order's ranges.
  yield* store.neighbours({ positions: [], around: ["m0003004", "m0003010", episode!.id], window: 2 })
  yield* store.setReviewState("m0000020", "confirmed")
  yield* store.supersede("m0000031", { content: "a successor of m31", kind: "fact", scope: "project:p0" })
  yield* store.expire("m0000033")
  yield* store.forget({ ids: ["m0000034", "m0000035"] }, { by: "explain test" })
  yield* store.forget({ ids: ["m0000036"], scopes: ["project:p0"] }, { by: "explain test" })
  yield* store.forget({ scope: "project:p99" }, { by: "explain test" })
  yield* store.tombstones({ ids: ["m0000034"] })
  yield* store.tombstones({ scopes: ["project:p99"] })
})

/**
 * The fill as one `INSERT … SELECT` over `generate_series` (PostgreSQL) or a recursive counter
 * (SQLite): 10% in `global`, the rest in one project scope per thousand; one in a hundred
 * always-on, one in ten on demand; one in twenty pending review; positions in threads of fifty
 * turns, but for the episodes (one in seven), which sit in their scope's write order instead;
 * tokens `record` and `common` in every row, `v0…v96` in ~1% each, `w0…w4999` in 20 rows each.
 */
export const fillColumns = {
  id: (i: string, dialect: "pg" | "sqlite") =>
    dialect === "pg" ? `'m' || lpad(${i}::text, 7, '0')` : `'m' || substr('0000000' || ${i}, -7, 7)`,
  scope: (i: string, div: string) =>
    `CASE WHEN ${i} % 10 = 0 THEN 'global' WHEN ${i} % 1000 = 7 THEN 'session:s' || (${i} ${div} 1000) ELSE 'project:p' || (${i} ${div} 1000) END`,
  kind: (i: string) => `CASE WHEN ${i} % 7 = 0 THEN 'fact' WHEN ${i} % 7 = 1 THEN 'episode' ELSE 'note' END`,
  delivery: (i: string) =>
    `CASE WHEN ${i} % 100 = 0 THEN 'always' WHEN ${i} % 10 = 1 THEN 'on_demand' ELSE 'retrieved' END`,
  review: (i: string) => `CASE WHEN ${i} % 20 = 0 THEN 'pending' ELSE 'confirmed' END`,
  tokens: (i: string) => `'record w' || (${i} % 5000) || ' v' || (${i} % 97) || ' common'`,
  thread: (i: string, div: string) => `CASE WHEN ${i} % 7 = 1 THEN NULL ELSE 't' || (${i} ${div} 50) END`,
  turn: (i: string) => `CASE WHEN ${i} % 7 = 1 THEN NULL ELSE ${i} % 50 END`,
  writeTurn: (i: string, div: string) => `CASE WHEN ${i} % 7 = 1 THEN ${i} ${div} 7 END`
}
