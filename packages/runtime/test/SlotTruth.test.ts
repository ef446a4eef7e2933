/**
 * One current truth per slot (decisions 0170–0172), on the runtime path: extraction candidates
 * (`Extraction.writeCandidate` → memory_save → the save gate), model saves that follow the
 * conflict's retry (`MemoryTools.memory_save`), and operator reviews (`Extraction.review`, what the
 * CLI, HTTP and MCP review entry points call), over the in-memory stores. Any interleaving leaves
 * exactly one current value in the slot, equal to a simple model's: the newest stated value that
 * is in force (saved, or a confirmed proposal) and not rejected.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, Slot } from "@engram/core"
import { Extraction, MemoryTools } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import * as fc from "fast-check"
import { environment, memory } from "./agentFixtures.js"

type Op =
  | { readonly _tag: "Say"; readonly value: number; readonly phrasing: number } // extraction
  | { readonly _tag: "Save"; readonly value: number; readonly phrasing: number } // the model's tool
  | { readonly _tag: "Confirm"; readonly pick: number }
  | { readonly _tag: "Reject"; readonly pick: number }
  | { readonly _tag: "RejectCurrent" }

/** Wordings of one slot, with labels that name nothing the spec declares (or none). */
const phrasings: ReadonlyArray<(v: number) => { readonly content: string; readonly label?: string }> = [
  (v) => ({ content: `The team standup is at ${v}am`, label: "standup" }),
  (v) => ({ content: `Our standup moved to ${v}am` }),
  (v) => ({ content: `Update: the standup is now at ${v} am`, label: "meeting-time" }),
  (v) => ({ content: `Standup at ${v}am`, label: "standup" }),
  (v) => ({ content: `FYI the daily standup changed to ${v}am`, label: "schedule" })
]

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ _tag: fc.constant("Say" as const), value: fc.integer({ min: 7, max: 11 }), phrasing: fc.nat(4) }),
  fc.record({ _tag: fc.constant("Save" as const), value: fc.integer({ min: 7, max: 11 }), phrasing: fc.nat(4) }),
  fc.record({ _tag: fc.constant("Confirm" as const), pick: fc.nat(20) }),
  fc.record({ _tag: fc.constant("Reject" as const), pick: fc.nat(20) }),
  fc.constant({ _tag: "RejectCurrent" as const })
)

interface Entry {
  readonly id: string
  readonly value: number
  readonly at: number
  state: "proposed" | "in-force" | "rejected"
}

/** The model: the newest stated entry in force. */
const modelCurrent = (entries: ReadonlyArray<Entry>): Entry | undefined =>
  entries.filter((e) => e.state === "in-force").reduce<Entry | undefined>(
    (a, e) => (a === undefined || e.at > a.at ? e : a),
    undefined
  )

const standup = (content: string, label?: string) =>
  Slot.slotOf(memory.spec, { content, ...(label !== undefined ? { label } : {}) })?.key

/** The slot's live values as the store holds them: deliverable, not a pending proposal. */
const liveValues = Effect.gen(function*() {
  const page = yield* (yield* MemoryStore.MemoryStore).list({ scopes: ["global"], deliverable: true, limit: 200 })
  return page.records.filter((r) =>
    Extraction.proposedHolder(r) === undefined && standup(r.content, r.label) === "~standup"
  )
})

const valueOf = (content: string): number => Number(/(\d+)/.exec(content)![1])

const run = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const tools = yield* MemoryTools.make(memory)
    const [first] = yield* memories.write([{
      content: "The team standup is at 9am",
      kind: "fact",
      scope: "global",
      sourceType: "operator"
    }])
    yield* memories.setReviewState(first!.id, "confirmed")
    const entries: Array<Entry> = [{ id: first!.id, value: 9, at: 0, state: "in-force" }]
    let clock = 0
    for (const step of ops) {
      yield* TestClock.adjust("1 second")
      clock += 1
      const current = modelCurrent(entries)
      switch (step._tag) {
        case "Say": {
          if (current === undefined) break
          const outcome = yield* Extraction.writeCandidate(
            { ...phrasings[step.phrasing]!(step.value), kind: "fact", turns: [1] },
            { sessionId: "s-1", memory, shown: new Map(), turns: [1] }
          )
          // A restatement of the value in force, or of a value waiting for review, corroborates it.
          const waiting = entries.some((e) => e.state === "proposed" && e.value === step.value)
          if (step.value === current.value || waiting) expect(outcome._tag).toBe("Corroborated")
          else {
            expect(outcome._tag).toBe("Proposed")
            if (outcome._tag === "Proposed") {
              entries.push({ id: outcome.id, value: step.value, at: clock, state: "proposed" })
            }
          }
          break
        }
        case "Save": {
          if (current === undefined) {
            break
          }
          const said = phrasings[step.phrasing]!(step.value)
          const result = yield* tools.memory_save({ ...said, kind: "fact" })
          if (step.value === current.value) {
            expect(result.status).toBe("corroborated")
            break
          }
          expect(result.status).toBe("conflict")
          if (result.status !== "conflict" || result.retry === undefined) {
            break
          }
          const retried = yield* tools.memory_save(result.retry.arguments)
          expect(retried.status).toBe("saved")
          if (retried.status === "saved") {
            entries.push({ id: retried.id, value: step.value, at: clock, state: "in-force" })
          }
          break
        }
        case "Confirm":
        case "Reject": {
          const pending = entries.filter((e) => e.state === "proposed")
          if (pending.length === 0) break
          const chosen = pending[step.pick % pending.length]!
          yield* Extraction.review(chosen.id, step._tag === "Confirm" ? "confirmed" : "rejected")
          chosen.state = step._tag === "Confirm" ? "in-force" : "rejected"
          break
        }
        case "RejectCurrent": {
          // Keep one value in force, so every later statement has something to correct.
          if (current === undefined || entries.filter((e) => e.state === "in-force").length < 2) break
          const [live] = yield* liveValues
          yield* Extraction.review(live!.id, "rejected")
          current.state = "rejected"
          break
        }
      }
      const live = yield* liveValues
      const expected = modelCurrent(entries)
      expect(live.map((r) => valueOf(r.content))).toEqual(expected === undefined ? [] : [expected.value])
    }
  })

const layer = environment(() => [ScriptedModel.text("{}")])

describe("one current truth per slot", () => {
  it(
    "any interleaving of saves, restatements, corrections, confirmations and rejections leaves the model's one value",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(op, { minLength: 1, maxLength: 14 }),
          (ops) => Effect.runPromise(run(ops).pipe(Effect.provide(layer), Effect.provide(TestContext.TestContext)))
        ),
        { numRuns: 60 }
      )
    },
    120_000
  )

  it.effect("confirming the older proposal after the newer leaves the newer value current; rejecting it restores the older", () =>
    run([
      { _tag: "Say", value: 10, phrasing: 1 },
      { _tag: "Say", value: 11, phrasing: 2 },
      { _tag: "Confirm", pick: 1 },
      { _tag: "Confirm", pick: 0 },
      { _tag: "RejectCurrent" }
    ]).pipe(Effect.provide(layer)))
})
