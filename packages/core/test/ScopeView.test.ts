import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, PromptSnapshot, ScopeView, Trajectory } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"

const A = "project:a"
const B = "project:b"

/** A's note, B's note; a-old superseded by b-new (across scopes); a-gone forgotten, linked to b-next. */
const seeded = Effect.gen(function*() {
  const store = yield* MemoryStore.MemoryStore
  yield* store.write([
    { id: "a-note", content: "a note", kind: "fact", scope: A },
    { id: "a-old", content: "a old", kind: "fact", scope: A },
    { id: "a-gone", content: "a gone", kind: "fact", scope: A },
    { id: "b-note", content: "b note", kind: "fact", scope: B },
    { id: "b-gone", content: "b gone", kind: "fact", scope: B }
  ])
  yield* store.supersede("a-old", { id: "b-new", content: "b new", kind: "fact", scope: B })
  yield* store.supersede("a-gone", { id: "b-next", content: "b next", kind: "fact", scope: B })
  yield* store.forget({ ids: ["a-gone", "b-gone"] }, { by: "test" })
  return store
})

const hash = Trajectory.contentHash("x")

/** A stored call: the scopes it read, memories in its prefix and projection, and references. */
const call = (options: {
  readonly scopes: ReadonlyArray<string> | null
  readonly prefix?: ReadonlyArray<string>
  readonly projected?: ReadonlyArray<string>
  readonly shed?: ReadonlyArray<string>
  readonly redacted?: ReadonlyArray<string>
}) =>
  new PromptSnapshot.PromptSnapshot({
    sessionId: "s",
    turn: 1,
    call: 0,
    mode: "native",
    at: DateTime.unsafeMake(0),
    model: null,
    tools: [],
    scopes: options.scopes,
    overlay: null,
    prefix: {
      hash,
      chars: 1,
      sections: [{
        name: "context",
        source: "instance",
        chars: 1,
        hash,
        fragments: (options.prefix ?? []).map((id) => ({ source: "memory" as const, chars: 1, memoryIds: [id] }))
      }]
    },
    messages: { input: 0, count: 1 },
    projection: {
      hash,
      chars: 1,
      budgetTokens: null,
      budgetChars: null,
      sections: [{
        label: "recalled_memory",
        status: "included",
        chars: 1,
        tokens: 1,
        items: 1,
        shed: 0,
        memoryIds: [...(options.projected ?? [])],
        sessionIds: []
      }],
      shed: (options.shed ?? []).map((ref) => ({ section: "recalled_memory" as const, ref, chars: 1 })),
      withheld: [],
      suppressed: []
    },
    strippedFrames: [],
    request: { hash, chars: 1, messages: 1 },
    usage: null,
    fullText: null,
    redacted: [...(options.redacted ?? [])]
  }, { disableValidation: true })

describe("ScopeView", () => {
  it.effect("holdings: an id is held when stored or forgotten in the scopes, foreign when elsewhere, else neither", () =>
    Effect.gen(function*() {
      yield* seeded
      const seen = yield* ScopeView.holdings([A], ["a-note", "a-gone", "b-note", "b-gone", "nobody", "a-note"])
      expect([...seen.held].sort()).toEqual(["a-gone", "a-note"])
      expect([...seen.foreign].sort()).toEqual(["b-gone", "b-note"])
    }).pipe(Effect.provide(MemoryStore.layerMemory)))

  it.effect("a record superseded across scopes is shown superseded, never by what; its own scope's links stay", () =>
    Effect.gen(function*() {
      const store = yield* seeded
      const { records } = yield* store.get(["a-old", "b-new"])
      const [old] = yield* ScopeView.records([A], records)
      expect(records).toHaveLength(2)
      // The other scope's record itself is left out.
      expect(yield* ScopeView.records([A], records)).toHaveLength(1)
      expect(old!.id).toBe("a-old")
      expect(old!.invalidatedAt).toBeDefined()
      expect(old!.supersededBy).toBeUndefined()
      expect(old!.invalidationReason).toBe("superseded")
      const [successor] = yield* ScopeView.records([B], records.slice(1))
      expect(successor!.supersedes).toBeUndefined()
      // Holding both scopes, nothing is removed.
      const both = yield* ScopeView.records([A, B], records)
      expect(both.map((record) => [record.supersedes, record.supersededBy])).toEqual([
        [undefined, "b-new"],
        ["a-old", undefined]
      ])
      expect(both[0]!.invalidationReason).toBe("superseded_by:b-new")
    }).pipe(Effect.provide(MemoryStore.layerMemory)))

  it.effect("a tombstone keeps links to its own scope only", () =>
    Effect.gen(function*() {
      const store = yield* seeded
      const graves = yield* store.tombstones({ ids: ["a-gone", "b-gone"] })
      const shown = yield* ScopeView.tombstones([A], graves)
      expect(shown.map((grave) => grave.memoryId)).toEqual(["a-gone"])
      expect(shown[0]!.supersededBy).toBeUndefined()
      expect((yield* ScopeView.tombstones([A, B], graves))[0]!.supersededBy).toBe("b-next")
    }).pipe(Effect.provide(MemoryStore.layerMemory)))

  it.effect("a stored call is shown only when what it read, carried and names belongs to the caller's scopes", () =>
    Effect.gen(function*() {
      yield* seeded
      const shown = (scopes: ReadonlyArray<string>, snapshot: PromptSnapshot.PromptSnapshot) =>
        ScopeView.sessionShown(scopes, [snapshot])
      // Its own scope's memories in the prefix and projection, a skill name shed, a forgotten one redacted.
      const own = call({
        scopes: [A],
        prefix: ["a-note"],
        projected: ["a-note"],
        shed: ["skill:x"],
        redacted: ["a-gone"]
      })
      expect(yield* shown([A], own)).toBe(true)
      expect(yield* shown([B], own)).toBe(false)
      // The report's case: the projection read B, the prefix carried A's memory.
      const mixed = call({ scopes: [B], prefix: ["a-note"], projected: ["b-note"] })
      expect(yield* shown([B], mixed)).toBe(false)
      expect(yield* shown([A, B], mixed)).toBe(true)
      // Another scope's id among the shed lines or the redactions hides the call too.
      expect(yield* shown([A], call({ scopes: [A], shed: ["b-note"] }))).toBe(false)
      expect(yield* shown([A], call({ scopes: [A], redacted: ["b-gone"] }))).toBe(false)
      // A carried memory no store knows cannot be vouched for; a call that did not record its scopes neither.
      expect(yield* shown([A], call({ scopes: [A], projected: ["nobody"] }))).toBe(false)
      expect(yield* shown([A], call({ scopes: null }))).toBe(false)
      expect(yield* ScopeView.sessionShown([A], [])).toBe(false)
      expect(yield* ScopeView.sessionShown([A], [own, mixed])).toBe(false)
    }).pipe(Effect.provide(MemoryStore.layerMemory)))
})
