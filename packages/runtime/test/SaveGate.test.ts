import { describe, expect, it } from "@effect/vitest"
import { Background, MemoryRecord, MemoryStore, Routing, RoutingPresets } from "@engram/core"
import { Promotion, SaveGate } from "@engram/runtime"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { companionBackground, stores } from "./utilities.js"

const options = { background: companionBackground, spec: RoutingPresets.userBackground }
const nameKey = Routing.placementKey(Routing.background("about_user", "name"))

const saved = (inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>) =>
  Effect.gen(function*() {
    const records = yield* Effect.flatMap(MemoryStore.MemoryStore, (s) => s.write(inputs))
    yield* Promotion.promoteNew(records, options)
    yield* TestClock.adjust("1 second")
    return records
  })

const candidate = (fields: Partial<MemoryRecord.MemoryRecord>): MemoryRecord.MemoryRecord =>
  new MemoryRecord.MemoryRecord({
    id: "new-1",
    content: "My name is Douglas",
    kind: "profile",
    label: "name",
    tags: [],
    sourceType: "conversation",
    scope: "global",
    deliveryPolicy: "retrieved",
    reviewState: "pending",
    createdAt: DateTime.unsafeMake(0),
    ...fields
  })

describe("SaveGate", () => {
  it.effect("lists the live holders of an address, newest first, leaving out dead, excluded and foreign ones", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const [a] = yield* saved([{ content: "Doug", kind: "profile", label: "name" }])
      const [b] = yield* saved([{ content: "Douglas", kind: "profile", label: "Name" }])
      const [c] = yield* saved([{ content: "D.", kind: "profile", label: "name" }])
      yield* saved([{ content: "Ana", kind: "profile", label: "name", scope: "project:alpha" }])
      const holders = (exclude?: ReadonlyArray<string>) =>
        Effect.map(
          SaveGate.liveHolders({ scope: "global", placementKey: nameKey, specKey: "user-background", exclude }),
          (found) => found.map((h) => h.record.id)
        )
      expect(yield* holders()).toEqual([c!.id, b!.id, a!.id])
      yield* store.setReviewState(b!.id, "rejected")
      yield* store.supersede(c!.id, { content: "Dougie", kind: "profile", label: "nickname" })
      expect(yield* holders()).toEqual([a!.id])
      expect(yield* holders([a!.id])).toEqual([])
      expect(yield* SaveGate.liveHolders({ scope: "global", placementKey: nameKey, specKey: "project" })).toEqual([])
    }).pipe(Effect.provide(stores)))

  it.effect("clears what the spec declines; holds a taken address, in a declared section or not", () =>
    Effect.gen(function*() {
      const [held] = yield* saved([{ content: "My name is Doug", kind: "profile", label: "name" }])
      const note = yield* SaveGate.check(
        candidate({ kind: "episode", content: "Went hiking today", label: "hike" }),
        options
      )
      expect(note).toMatchObject({ _tag: "Clear", evaluation: { _tag: "Declined", reason: "spec-declined" } })
      // Declined or not, a record stating a held slot's value meets its holder (decision 0170).
      const episode = yield* SaveGate.check(candidate({ kind: "episode" }), options)
      expect(episode).toMatchObject({ _tag: "Held", evaluation: { _tag: "Declined" }, key: "name" })
      // An agent that declares no user section: the identity tier delivers the address, so it is held too.
      const undeclared = yield* SaveGate.check(candidate({}), { ...options, background: Background.empty })
      expect(undeclared).toMatchObject({ _tag: "Held", evaluation: { reason: "undeclared-section" } })
      const free = yield* SaveGate.check(candidate({ label: "home", content: "Oslo" }), {
        ...options,
        background: Background.empty
      })
      expect(free).toMatchObject({ _tag: "Clear", evaluation: { reason: "undeclared-section" } })
      const taken = yield* SaveGate.check(candidate({}), options)
      expect(taken._tag).toBe("Held")
      expect(taken._tag === "Held" && taken.holders.map((h) => h.record.id)).toEqual([held!.id])
      expect((yield* SaveGate.check(candidate({}), { ...options, supersedes: held!.id }))._tag).toBe("Clear")
      expect((yield* SaveGate.check(candidate({ label: "home", content: "Oslo" }), options))._tag).toBe("Clear")
      // What the content states beats the label (decision 0170): "My name is Douglas" is the name.
      expect((yield* SaveGate.check(candidate({ label: "home" }), options))._tag).toBe("Held")
    }).pipe(Effect.provide(stores)))

  it.effect("compares canonical keys: an alias of a held key is held, even for a spec whose route only slugifies", () =>
    Effect.gen(function*() {
      const keys: Routing.KeyVocabulary = { about_user: [{ key: "name", aliases: ["first name", "full name"] }] }
      const slugOnly: Routing.MemoryRoutingSpec = {
        key: "slug-only",
        version: "1",
        keys,
        route: (r) => (r.kind === "profile" ? Routing.background("about_user", Routing.recordKey(r).key) : null),
        finalize: Routing.finalizeOldestFirst
      }
      const own = { background: companionBackground, spec: slugOnly }
      const records = yield* Effect.flatMap(
        MemoryStore.MemoryStore,
        (s) => s.write([{ content: "Doug", kind: "profile", label: "name" }])
      )
      yield* Promotion.promoteNew(records, own)
      for (const label of ["first_name", "Full Name", "NAME"]) {
        const verdict = yield* SaveGate.check(candidate({ label }), own)
        expect([label, verdict._tag, verdict._tag === "Held" && verdict.holders.map((h) => h.record.id)]).toEqual([
          label,
          "Held",
          [records[0]!.id]
        ])
      }
      expect((yield* SaveGate.check(candidate({ label: "nickname" }), own))._tag).toBe("Clear")
    }).pipe(Effect.provide(stores)))
})
