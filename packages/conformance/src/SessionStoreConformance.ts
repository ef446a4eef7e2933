/**
 * The `SessionStore` conformance kit: one suite every session-store backend runs from its own
 * vitest file, so the in-memory, SQLite and PostgreSQL stores agree on what a session holds.
 *
 * Covered: every message type read back field for field (tool parameters and results as nested
 * JSON, non-ASCII text, millisecond timestamps, the legacy context-frame flag); append order
 * across calls and within large batches; sessions kept apart; atomic batches (an invalid message
 * stores nothing) with a typed error; concurrent appends that never interleave within a batch;
 * the pending interrupt — put, replace, read, clear, per session, invalid ones refused; and the
 * listing of every session a store holds (a ledger alone counts), in one order on every backend; the extraction ledger —
 * runs read back field for field in record order, per session, the summary derived from them,
 * invalid runs refused, concurrent records all kept; extraction claims — one holder at a time,
 * renewed by its holder, taken once lapsed, released only by its holder, invalid ones refused, one
 * winner among concurrent claimants.
 *
 * Every test builds the layer afresh, so a backend on a shared server must hand each build its
 * own empty store.
 *
 * @example
 * ```ts
 * import { runSessionStoreConformance } from "@engram/conformance"
 * import { SessionStore } from "@engram/core"
 *
 * runSessionStoreConformance("in-memory", SessionStore.layerMemory)
 * ```
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import { SessionStore } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const T0 = Date.UTC(2025, 2, 14, 9, 26, 53, 589)
const at = (offset = 0) => DateTime.unsafeMake(T0 + offset)

const encode = Schema.encodeSync(SessionStore.SessionMessage)
const plain = (messages: ReadonlyArray<SessionStore.SessionMessage>) => messages.map((message) => encode(message))

/**
 * An operator message saying `text`, `offset` ms after a fixed instant.
 *
 * @since 0.1.0
 * @category fixtures
 */
export const operator = (text: string, offset = 0): SessionStore.OperatorMessage =>
  new SessionStore.OperatorMessage({ text, at: at(offset) })

/**
 * An assistant message with `text` and the given tool calls.
 *
 * @since 0.1.0
 * @category fixtures
 */
export const assistant = (
  text: string,
  toolCalls: ReadonlyArray<SessionStore.ToolCall> = [],
  offset = 0
): SessionStore.AssistantMessage => new SessionStore.AssistantMessage({ text, toolCalls, at: at(offset) })

/**
 * A tool message with the given results.
 *
 * @since 0.1.0
 * @category fixtures
 */
export const tool = (results: ReadonlyArray<SessionStore.ToolResult>, offset = 0): SessionStore.ToolMessage =>
  new SessionStore.ToolMessage({ results, at: at(offset) })

/**
 * A pending interrupt for `turn`, awaiting one `memory_forget` call.
 *
 * @since 0.1.0
 * @category fixtures
 */
export const interrupt = (turn: number, reason = "forgetting needs approval"): SessionStore.PendingInterrupt =>
  new SessionStore.PendingInterrupt({
    turn,
    toolCalls: [{ id: `call-${turn}`, name: "memory_forget", params: { id: "mem-1" } }],
    reason,
    at: at(turn),
    detail: { round: 1, resumeWith: ["approve", "deny"] }
  })

const store = SessionStore.SessionStore

/**
 * An extraction run over turns `first`–`last`: `extracted` with the given tokens, or `failed`.
 *
 * @since 0.1.0
 * @category fixtures
 */
export const extractionRun = (
  first: number,
  last: number,
  outcome: "extracted" | "failed" = "extracted",
  tokens = 120,
  offset = 0
): SessionStore.ExtractionRun =>
  new SessionStore.ExtractionRun({
    at: at(offset),
    turns: { first, last },
    outcome,
    calls: 1,
    usage: { inputTokens: tokens - 20, outputTokens: 20, totalTokens: tokens, estimated: outcome === "failed" },
    written: outcome === "extracted" ? ["mem-1", "mem-2"] : [],
    corroborated: outcome === "extracted" ? ["mem-0"] : [],
    ...(outcome === "failed" ? { problem: "the model's answer is not ExtractedMemories — café ☕" } : {})
  })

/**
 * A claim on a session's extraction by `holder`, from `from` to `to` ms after a fixed instant.
 *
 * @since 0.1.0
 * @category fixtures
 */
export const extractionClaim = (holder: string, from = 0, to = 60_000): SessionStore.ExtractionClaim =>
  new SessionStore.ExtractionClaim({ holder, at: at(from), until: at(to) })

/**
 * Registers the session-store conformance suite for one backend. Call it at the top level of a
 * vitest file. `RExtra` is whatever else the layer provides (a SQL client, say).
 *
 * @since 0.1.0
 * @category conformance
 */
export const runSessionStoreConformance = <RExtra = never, E = never>(
  name: string,
  layer: Layer.Layer<SessionStore.SessionStore | RExtra, E>
): void => {
  const provide = <A, E2>(self: Effect.Effect<A, E2, SessionStore.SessionStore>) =>
    Effect.provide(self, layer) as Effect.Effect<A, E2 | E>

  describe(`SessionStore conformance: ${name}`, () => {
    describe("messages", () => {
      it.effect("reads back every message type field for field, in append order", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          const messages = [
            operator("Hi, I'm Doug — ça va? 🦊", 0),
            assistant("", [
              { id: "call-1", name: "memory_save", params: { content: "My name is Doug", kind: "profile", tags: [] } },
              { id: "call-2", name: "search", params: { query: "x", nested: { deep: [1, 2.5, -3e-7, null, true] } } }
            ], 1),
            tool([
              { id: "call-1", name: "memory_save", isFailure: false, result: { id: "mem-1" } },
              { id: "call-2", name: "search", isFailure: true, result: "search is down" }
            ], 2),
            assistant("Nice to meet you, Doug.\nHow can I help?", [], 3),
            new SessionStore.OperatorMessage({
              text: "<context>old frame</context>",
              at: at(4),
              legacyContextFrame: true
            })
          ]
          yield* s.append("s-1", messages)
          const history = yield* s.load("s-1")
          expect(history.skipped).toBe(0)
          expect(plain(history.messages)).toEqual(plain(messages))
          expect(history.messages.map((m) => m._tag)).toEqual([
            "OperatorMessage",
            "AssistantMessage",
            "ToolMessage",
            "AssistantMessage",
            "OperatorMessage"
          ])
          expect(DateTime.toEpochMillis(history.messages[0]!.at)).toBe(T0)
          expect(SessionStore.modelView(history.messages)).toMatchObject({ stripped: 1 })
        })))

      it.effect("an unknown session loads empty; appending to one starts it", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          expect(yield* s.load("nobody")).toEqual({ messages: [], skipped: 0 })
          yield* s.append("new-session", [operator("first")])
          expect(plain((yield* s.load("new-session")).messages)).toEqual(plain([operator("first")]))
        })))

      it.effect("appends accumulate across calls; sessions never see each other's messages", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.append("a", [operator("a1")])
          yield* s.append("b", [operator("b1")])
          yield* s.append("a", [assistant("a2"), operator("a3")])
          yield* s.append("a", [])
          expect((yield* s.load("a")).messages.map((m) => (m._tag === "ToolMessage" ? "" : m.text))).toEqual([
            "a1",
            "a2",
            "a3"
          ])
          expect((yield* s.load("b")).messages).toHaveLength(1)
        })))

      it.effect("keeps the order of a batch larger than any backend's statement chunk", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          const batch = Array.from({ length: 1_234 }, (_, i) => operator(`m${i}`, i))
          yield* s.append("big", batch)
          yield* s.append("big", [operator("last")])
          const texts = (yield* s.load("big")).messages.map((m) => (m._tag === "OperatorMessage" ? m.text : ""))
          expect(texts).toHaveLength(1_235)
          expect(texts[0]).toBe("m0")
          expect(texts[1_233]).toBe("m1233")
          expect(texts[1_234]).toBe("last")
        })))

      it.effect("a batch with an invalid message fails with InvalidSessionData and stores nothing", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.append("s-1", [operator("kept")])
          const invalid = new SessionStore.AssistantMessage(
            { text: "", toolCalls: [{ id: "c", name: "t", params: { n: Number.NaN } }], at: at() },
            { disableValidation: true }
          )
          const error = yield* Effect.flip(s.append("s-1", [operator("valid"), invalid, operator("also valid")]))
          expect(error).toBeInstanceOf(SessionStore.InvalidSessionData)
          expect(error.message).toContain("message #1")
          expect((yield* s.load("s-1")).messages.map((m) => (m._tag === "OperatorMessage" ? m.text : ""))).toEqual([
            "kept"
          ])
        })))

      it.effect("concurrent appends to one session each land whole, never interleaved", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* Effect.forEach(
            Array.from({ length: 25 }, (_, b) => b),
            (b) => s.append("busy", [operator(`${b}:0`), assistant(`${b}:1`), operator(`${b}:2`)]),
            { concurrency: "unbounded", discard: true }
          )
          const texts = (yield* s.load("busy")).messages.map((m) => (m._tag === "ToolMessage" ? "" : m.text))
          expect(texts).toHaveLength(75)
          for (let i = 0; i < texts.length; i += 3) {
            const batch = texts[i]!.split(":")[0]
            expect(texts.slice(i, i + 3)).toEqual([`${batch}:0`, `${batch}:1`, `${batch}:2`])
          }
          expect(new Set(texts.map((t) => t.split(":")[0])).size).toBe(25)
        })))
    })

    describe("listing sessions", () => {
      it.effect("names every session with a message, a pending interrupt or an extraction run, once, in code-unit order", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          expect(yield* s.listSessions()).toEqual([])
          // "～" (U+FF5E) sorts after "😀" by UTF-16 code units, before it by UTF-8 bytes.
          yield* s.append("～wave", [operator("1")])
          yield* s.append("😀smile", [operator("2"), operator("3")])
          yield* s.append("b", [operator("4")])
          yield* s.append("b", [operator("5")])
          yield* s.append("A", [operator("6")])
          yield* s.append("empty-batch", [])
          yield* s.putInterrupt("interrupt-only", interrupt(1))
          yield* s.putInterrupt("b", interrupt(2))
          yield* s.putInterrupt("cleared", interrupt(3))
          yield* s.clearInterrupt("cleared")
          // An ACP session's ledger is kept with no messages beside it: it is still a session.
          yield* s.recordExtraction("ledger-only", extractionRun(1, 2))
          yield* s.recordExtraction("b", extractionRun(1, 1))
          expect(yield* s.listSessions()).toEqual(["A", "b", "interrupt-only", "ledger-only", "😀smile", "～wave"])
        })))
    })

    describe("extraction ledger", () => {
      const encodeRun = Schema.encodeSync(SessionStore.ExtractionRun)

      it.effect("reads runs back field for field, in record order, per session, and sums them up", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          expect(yield* s.loadExtractions("s-1")).toEqual({ runs: [], skipped: 0 })
          const runs = [
            extractionRun(1, 8, "extracted", 300, 1),
            extractionRun(9, 12, "failed", 90, 2),
            extractionRun(9, 12, "failed", 90, 3),
            extractionRun(9, 12, "extracted", 150, 4),
            extractionRun(13, 13, "failed", 40, 5)
          ]
          for (const run of runs) yield* s.recordExtraction("s-1", run)
          yield* s.recordExtraction("s-2", extractionRun(1, 2))
          const read = yield* s.loadExtractions("s-1")
          expect(read.skipped).toBe(0)
          expect(read.runs.map((run) => encodeRun(run))).toEqual(runs.map((run) => encodeRun(run)))
          expect(SessionStore.summarizeExtractions(read.runs)).toEqual({
            through: 12,
            runs: 5,
            calls: 5,
            tokens: 670,
            failures: 1,
            lastProblem: "the model's answer is not ExtractedMemories — café ☕"
          })
          expect((yield* s.loadExtractions("s-2")).runs.map((run) => run.turns)).toEqual([{ first: 1, last: 2 }])
          // The ledger is beside the session, not in it.
          expect((yield* s.load("s-1")).messages).toEqual([])
        })))

      it.effect("an invalid run fails with InvalidSessionData and stores nothing", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.recordExtraction("s-1", extractionRun(1, 2))
          const invalid = new SessionStore.ExtractionRun(
            { ...extractionRun(3, 4), turns: { first: 5, last: 4 } },
            { disableValidation: true }
          )
          const error = yield* Effect.flip(s.recordExtraction("s-1", invalid))
          expect(error).toBeInstanceOf(SessionStore.InvalidSessionData)
          expect((yield* s.loadExtractions("s-1")).runs.map((run) => run.turns.last)).toEqual([2])
        })))

      it.effect("keeps every one of many concurrent records", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* Effect.forEach(
            Array.from({ length: 20 }, (_, i) => i + 1),
            (i) => s.recordExtraction("busy", extractionRun(i, i)),
            { concurrency: "unbounded", discard: true }
          )
          const read = yield* s.loadExtractions("busy")
          expect(read.runs.map((run) => run.turns.last).sort((a, b) => a - b))
            .toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
          expect(SessionStore.summarizeExtractions(read.runs)).toMatchObject({ through: 20, runs: 20, tokens: 2400 })
        })))
    })

    describe("extraction claims", () => {
      const encodeClaim = Schema.encodeSync(SessionStore.ExtractionClaim)

      it.effect("one holder at a time: renewed by its holder, refused to another (naming it), taken once lapsed", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          expect(yield* s.claimExtraction("s-1", extractionClaim("worker-a", 0, 60_000))).toEqual({ _tag: "Claimed" })
          // Another session is another claim.
          expect(yield* s.claimExtraction("s-2", extractionClaim("worker-b", 0, 60_000))).toEqual({ _tag: "Claimed" })
          const held = yield* s.claimExtraction("s-1", extractionClaim("worker-b", 1_000, 61_000))
          expect(held._tag).toBe("Held")
          if (held._tag === "Held") {
            expect(encodeClaim(held.claim)).toEqual(encodeClaim(extractionClaim("worker-a", 0, 60_000)))
          }
          // The holder renews its lease.
          expect(yield* s.claimExtraction("s-1", extractionClaim("worker-a", 30_000, 90_000))).toEqual({
            _tag: "Claimed"
          })
          const stillHeld = yield* s.claimExtraction("s-1", extractionClaim("worker-b", 60_000, 120_000))
          expect(stillHeld._tag === "Held" && stillHeld.claim.holder).toBe("worker-a")
          // At the end of the lease the claim has lapsed: the next claimant takes it.
          expect(yield* s.claimExtraction("s-1", extractionClaim("worker-b", 90_000, 150_000))).toEqual({
            _tag: "Claimed"
          })
          const taken = yield* s.claimExtraction("s-1", extractionClaim("worker-a", 100_000, 160_000))
          expect(taken._tag === "Held" && taken.claim.holder).toBe("worker-b")
        })))

      it.effect("a release ends only the holder's own claim; then anyone may claim", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.claimExtraction("s-1", extractionClaim("worker-a"))
          yield* s.releaseExtraction("s-1", "worker-b")
          expect((yield* s.claimExtraction("s-1", extractionClaim("worker-b", 1)))._tag).toBe("Held")
          yield* s.releaseExtraction("s-1", "worker-a")
          yield* s.releaseExtraction("never-claimed", "worker-a")
          expect(yield* s.claimExtraction("s-1", extractionClaim("worker-b", 2))).toEqual({ _tag: "Claimed" })
        })))

      it.effect("an invalid claim fails with InvalidSessionData and changes nothing; a claim is no session", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.claimExtraction("s-1", extractionClaim("worker-a"))
          const backwards = new SessionStore.ExtractionClaim(
            { holder: "worker-b", at: at(90_000), until: at(80_000) },
            { disableValidation: true }
          )
          const empty = new SessionStore.ExtractionClaim(
            { holder: "", at: at(90_000), until: at(100_000) },
            { disableValidation: true }
          )
          for (const invalid of [backwards, empty]) {
            expect(yield* Effect.flip(s.claimExtraction("s-1", invalid))).toBeInstanceOf(
              SessionStore.InvalidSessionData
            )
          }
          const held = yield* s.claimExtraction("s-1", extractionClaim("worker-c", 1))
          expect(held._tag === "Held" && held.claim.holder).toBe("worker-a")
          expect(yield* s.listSessions()).toEqual([])
        })))

      it.effect("of many concurrent claimants of one session, exactly one holds it", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          const outcomes = yield* Effect.forEach(
            Array.from({ length: 12 }, (_, i) => `worker-${i}`),
            (holder) => s.claimExtraction("busy", extractionClaim(holder)),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter((o) => o._tag === "Claimed")).toHaveLength(1)
          const holders = new Set(outcomes.flatMap((o) => (o._tag === "Held" ? [o.claim.holder] : [])))
          expect(holders.size).toBe(1)
        })))
    })

    describe("pending interrupt", () => {
      it.effect("is read back field for field, replaced by a newer one, and cleared", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          expect(yield* s.getInterrupt("s-1")).toEqual(Option.none())
          yield* s.putInterrupt("s-1", interrupt(2))
          const read = yield* s.getInterrupt("s-1")
          expect(Option.map(read, Schema.encodeSync(SessionStore.PendingInterrupt))).toEqual(
            Option.some(Schema.encodeSync(SessionStore.PendingInterrupt)(interrupt(2)))
          )
          yield* s.putInterrupt("s-1", interrupt(3, "a newer question"))
          expect(Option.map(yield* s.getInterrupt("s-1"), (i) => [i.turn, i.reason])).toEqual(
            Option.some([3, "a newer question"])
          )
          yield* s.clearInterrupt("s-1")
          expect(yield* s.getInterrupt("s-1")).toEqual(Option.none())
          yield* s.clearInterrupt("s-1")
        })))

      it.effect("belongs to one session, and leaves the messages alone", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.append("s-1", [operator("hello")])
          yield* s.putInterrupt("s-1", interrupt(1))
          expect(yield* s.getInterrupt("s-2")).toEqual(Option.none())
          yield* s.clearInterrupt("s-2")
          expect(Option.isSome(yield* s.getInterrupt("s-1"))).toBe(true)
          expect((yield* s.load("s-1")).messages).toHaveLength(1)
        })))

      it.effect("an invalid interrupt fails with InvalidSessionData and keeps the stored one", () =>
        provide(Effect.gen(function*() {
          const s = yield* store
          yield* s.putInterrupt("s-1", interrupt(1))
          const invalid = new SessionStore.PendingInterrupt(
            { turn: -1, toolCalls: [], reason: "x", at: at() },
            { disableValidation: true }
          )
          const error = yield* Effect.flip(s.putInterrupt("s-1", invalid))
          expect(error).toBeInstanceOf(SessionStore.InvalidSessionData)
          expect(Option.map(yield* s.getInterrupt("s-1"), (i) => i.turn)).toEqual(Option.some(1))
        })))
    })
  })
}
