import { describe, expect, it } from "@effect/vitest"
import { ProjectionLayout, PromptSnapshot, Trajectory } from "@engram/core"
import { DateTime, Either } from "effect"

const hash = (text: string) => Trajectory.contentHash(text)

/** A snapshot as stored before budgets were in tokens: its projection names `budgetChars` only. */
const storedBeforeTokenBudgets = {
  sessionId: "s-1",
  turn: 1,
  call: 0,
  mode: "native",
  at: "2025-03-01T12:00:00.000Z",
  model: "scripted",
  tools: ["memory_save"],
  prefix: { hash: null, chars: 0, sections: [] },
  messages: { input: 0, count: 1 },
  projection: {
    hash: hash("projection"),
    chars: 120,
    budgetChars: 64_000,
    sections: [{
      label: "working_state",
      status: "included",
      chars: 120,
      tokens: 30,
      items: 1,
      shed: 0,
      memoryIds: [],
      sessionIds: []
    }],
    shed: [],
    withheld: [],
    suppressed: []
  },
  strippedFrames: [],
  request: { hash: hash("request"), chars: 400, messages: 2 },
  usage: null,
  fullText: null
}

describe("PromptSnapshot", () => {
  it("decodes a snapshot stored before token budgets: its budget was in chars", () => {
    const decoded = Either.getOrThrow(PromptSnapshot.decodeStored(storedBeforeTokenBudgets))
    expect(decoded.projection.budgetChars).toBe(64_000)
    expect(decoded.projection.budgetTokens).toBeNull()
  })

  it("keeps a token budget through encoding and decoding", () => {
    const decoded = Either.getOrThrow(PromptSnapshot.decodeStored({
      ...storedBeforeTokenBudgets,
      projection: { ...storedBeforeTokenBudgets.projection, budgetChars: null, budgetTokens: 16_000 }
    }))
    expect(decoded.projection).toMatchObject({ budgetTokens: 16_000, budgetChars: null })
    const encoded = Either.getOrThrow(PromptSnapshot.encode(decoded))
    expect(encoded.projection).toMatchObject({ budgetTokens: 16_000, budgetChars: null })
    expect(Either.getOrThrow(PromptSnapshot.decodeStored(JSON.parse(JSON.stringify(encoded))))).toEqual(decoded)
  })

  it("a projection blob stored before token budgets decodes, with no token budget or protected tokens", () => {
    const projection = ProjectionLayout.composeProjectedContext(
      { now: DateTime.unsafeMake("2025-03-01T12:00:00.000Z"), workingState: "goal: ship it" },
      { budget: ProjectionLayout.chars(16_000) }
    )
    const encoded = JSON.parse(Trajectory.projectionBlob(projection).body)
    // What a projection blob held then: the budget summary without the token budget fields.
    delete encoded.budget.budgetTokens
    delete encoded.budget.protectedTokens
    const body = JSON.stringify(encoded)
    const old = Either.getOrThrow(Trajectory.projectionOf({ _tag: "Blob", kind: "projection", hash: hash(body), body }))
    expect(old.text).toBe(projection.text)
    expect(old.budget).toEqual({ ...projection.budget, budgetTokens: null, protectedTokens: null })
  })
})
