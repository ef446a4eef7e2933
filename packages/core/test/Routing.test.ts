import { describe, expect, it } from "@effect/vitest"
import { Background, MemoryRecord, Routing } from "@engram/core"
import { DateTime, Effect, Either } from "effect"
import * as fc from "fast-check"
import { readFileSync } from "node:fs"
import { aRecord } from "./utilities.js"

const record = aRecord

const declared = Background.unsafeMake({
  sections: [
    { id: "about_user", title: "About the User", promotion: "auto", entries: [{ key: "secret", value: "authored" }] },
    { id: "notes", title: "Notes" }
  ]
})
const ctx = Routing.routingContext(declared)

const spec = (route: Routing.MemoryRoutingSpec["route"]): Routing.MemoryRoutingSpec => ({
  key: "test",
  version: "1",
  route,
  finalize: Routing.finalizeOldestFirst
})

describe("placementKey", () => {
  it("is JSON of [section, key]", () => {
    expect(Routing.placementKey(Routing.background("about_user", "name"))).toBe(`["about_user","name"]`)
  })

  it("property: injective and stable", () => {
    const part = fc.string({
      unit: fc.constantFrom("a", "b", ",", "\"", "\\", "[", "]", "\u0000", "é"),
      minLength: 1,
      maxLength: 6
    })
    fc.assert(
      fc.property(part, part, part, part, (s1, k1, s2, k2) => {
        const a = Routing.placementKey(Routing.background(s1, k1))
        const b = Routing.placementKey(Routing.background(s2, k2))
        expect(a === b).toBe(s1 === s2 && k1 === k2)
        expect(Routing.placementKey({ key: k1, section: s1, primitive: "background" })).toBe(a)
        return true
      }),
      { numRuns: 2000 }
    )
  })
})

describe("keys", () => {
  it("slugify folds case, accents, punctuation and spacing", () => {
    expect(Routing.slugify("Name")).toBe("name")
    expect(Routing.slugify("name ")).toBe("name")
    expect(Routing.slugify("NAME:")).toBe("name")
    expect(Routing.slugify("Time zone")).toBe("time_zone")
    expect(Routing.slugify("Café au lait")).toBe("cafe_au_lait")
    expect(Routing.slugify("名前")).toBe("名前")
    expect(Routing.slugify("?!")).toBe("")
    // Voiced kana are letters of their own: glass and crow are two addresses.
    expect(Routing.slugify("ガラス")).toBe("ガラス")
    expect(Routing.slugify("ガラス")).not.toBe(Routing.slugify("カラス"))
    expect(Routing.slugify("이름")).toBe("이름")
  })

  it("property: slugify is idempotent and never contains '-'", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 64 }), (label) => {
        const slug = Routing.slugify(label)
        expect(Routing.slugify(slug)).toBe(slug)
        expect(slug.includes("-")).toBe(false)
        return true
      }),
      { numRuns: 1000 }
    )
  })

  it("content keys are stable hashes of the content's tokens", () => {
    // FNV-1a 64 of the UTF-8 bytes "a": a pinned value, because content keys are persisted.
    expect(Routing.contentKey("a")).toBe("c-af63dc4c8601ec8c")
    expect(Routing.contentKey("My name is Doug.")).toBe(Routing.contentKey("my NAME is doug"))
    expect(Routing.contentKey("My name is Doug")).not.toBe(Routing.contentKey("My name is Dough"))
    expect(Routing.contentKey("🙂")).not.toBe(Routing.contentKey("🙃"))
  })

  it("recordKey uses the slugified label, else the content", () => {
    expect(Routing.recordKey(record({ label: "Name " }))).toEqual({ key: "name", keySource: "label" })
    expect(Routing.recordKey(record())).toEqual({ key: Routing.contentKey("My name is Doug"), keySource: "content" })
    expect(Routing.recordKey(record({ label: "!!" }))).toEqual({
      key: Routing.contentKey("My name is Doug"),
      keySource: "content"
    })
  })
})

describe("routingContext", () => {
  it("projects ids, titles and tiers only — never entries — and is frozen", () => {
    expect(ctx).toEqual({
      sections: [
        { id: "about_user", title: "About the User", promotion: "auto" },
        { id: "notes", title: "Notes", promotion: "locked" }
      ]
    })
    expect(Object.isFrozen(ctx.sections[0])).toBe(true)
  })
})

/** The evaluation of a spec that can place every record it is given here. */
const evaluate = (...args: Parameters<typeof Routing.evaluateRoute>): Routing.RouteEvaluation =>
  Either.getOrThrowWith(Routing.evaluateRoute(...args), (error) => error)

describe("evaluateRoute", () => {
  const byLabel = spec((r) => Routing.background("about_user", Routing.recordKey(r).key))

  it("routes into a declared section with the address, key source and tier", () => {
    expect(evaluate(record({ label: "Name" }), ctx, byLabel)).toEqual({
      _tag: "Routed",
      placement: { primitive: "background", section: "about_user", key: "name" },
      placementKey: `["about_user","name"]`,
      keySource: "label",
      tier: "auto"
    })
    expect(evaluate(record(), ctx, byLabel)).toMatchObject({ _tag: "Routed", keySource: "content" })
  })

  it("'Name' and 'name ' are one address", () => {
    const a = evaluate(record({ label: "Name" }), ctx, byLabel)
    const b = evaluate(record({ label: "name ", content: "Call me Doug" }), ctx, byLabel)
    expect(a._tag === "Routed" && b._tag === "Routed" && a.placementKey === b.placementKey).toBe(true)
  })

  it("folds the key a spec returns through the keys it declares, whatever its route did", () => {
    const keys: Routing.KeyVocabulary = { about_user: [{ key: "name", aliases: ["first name", "user name"] }] }
    // A route that only slugifies the label: evaluateRoute still gives the canonical key.
    const slugOnly: Routing.MemoryRoutingSpec = {
      ...spec((r) => Routing.background("about_user", Routing.recordKey(r).key)),
      keys
    }
    const at = (fields: Partial<Routing.RoutableRecord>) => {
      const evaluation = evaluate(record(fields), ctx, slugOnly)
      return evaluation._tag === "Routed" ? [evaluation.placement.key, evaluation.keySource] : evaluation.reason
    }
    expect(at({ label: "First Name" })).toEqual(["name", "alias"])
    expect(at({ label: "user_name" })).toEqual(["name", "alias"])
    expect(at({ label: "NAME" })).toEqual(["name", "canonical"])
    expect(at({ label: "nickname" })).toEqual(["nickname", "label"])
    expect(at({})).toEqual([Routing.contentKey("My name is Doug"), "content"])
    // Declared for another section only: not folded here.
    const elsewhere: Routing.MemoryRoutingSpec = { ...slugOnly, keys: { notes: keys.about_user! } }
    const evaluation = evaluate(record({ label: "first_name" }), ctx, elsewhere)
    expect(evaluation._tag === "Routed" && evaluation.placement.key).toBe("first_name")
  })

  it("declines with spec-declined when route returns null or undefined", () => {
    expect(evaluate(record(), ctx, spec(() => null))).toEqual({
      _tag: "Declined",
      reason: "spec-declined",
      placement: null
    })
    expect(evaluate(record(), ctx, spec(() => undefined))).toMatchObject({ reason: "spec-declined" })
  })

  it("declines with undeclared-section when the section is not declared, keeping the placement", () => {
    expect(evaluate(record(), ctx, spec(() => Routing.background("preferences", "tea")))).toEqual({
      _tag: "Declined",
      reason: "undeclared-section",
      placement: { primitive: "background", section: "preferences", key: "tea" },
      placementKey: `["preferences","tea"]`,
      keySource: "label"
    })
  })

  it("gives InvalidPlacement, never a throw, for a malformed placement or a route that throws — a bug in the spec", () => {
    const invalid = (route: Routing.MemoryRoutingSpec["route"]) => {
      const evaluation = Routing.evaluateRoute(record(), ctx, spec(route))
      return Either.isLeft(evaluation) ? evaluation.left : undefined
    }
    const broken = invalid(() => ({ primitive: "background", section: "about_user", key: "" }))
    expect(broken).toBeInstanceOf(Routing.InvalidPlacement)
    expect(broken?.message).toMatch(/routing spec "test" produced an invalid placement.*key/)
    const wrongArm = invalid(() => ({ primitive: "judgment", section: "x", key: "y" }) as unknown as Routing.Placement)
    expect(wrongArm).toBeInstanceOf(Routing.InvalidPlacement)
    const threw = invalid(() => {
      throw new Error("no such label")
    })
    expect(threw?.problem).toBe("route threw: no such label")
  })

  it("property: total — any record and any spec give an evaluation or an InvalidPlacement, never a throw", () => {
    const anything = fc.oneof(
      fc.anything(),
      fc.record({
        primitive: fc.constantFrom("background", "judgment"),
        section: fc.constantFrom("about_user", "notes", "undeclared", ""),
        key: fc.oneof(fc.string({ maxLength: 8 }), fc.constant("c-0123456789abcdef"))
      })
    )
    const vocabulary = fc.option(
      fc.dictionary(
        fc.constantFrom("about_user", "notes", "elsewhere"),
        fc.array(
          fc.record({
            key: fc.string({ maxLength: 8 }),
            aliases: fc.array(fc.string({ maxLength: 8 }), { maxLength: 2 })
          }),
          { maxLength: 3 }
        )
      ),
      { nil: undefined }
    )
    const recordArb = fc.record({
      content: fc.string({ maxLength: 40 }),
      label: fc.option(fc.string({ maxLength: 12 }), { nil: undefined }),
      kind: fc.constantFrom<MemoryRecord.MemoryKind>("profile", "fact", "note", "episode")
    })
    fc.assert(
      fc.property(recordArb, fc.func(anything), fc.boolean(), vocabulary, (fields, route, throws, keys) => {
        // Any routable shape, not only a record that decodes: routing must not rely on validation.
        const r: Routing.RoutableRecord = { ...record(), ...fields }
        const spec: Routing.MemoryRoutingSpec = {
          key: "arbitrary",
          version: "1",
          keys,
          route: (routable) => {
            if (throws) throw new Error("the spec fell over")
            return route(routable.label, routable.content) as Routing.Placement | null | undefined
          },
          finalize: Routing.finalizeOldestFirst
        }
        const evaluation = Routing.evaluateRoute(r, ctx, spec)
        return Either.isLeft(evaluation)
          ? evaluation.left instanceof Routing.InvalidPlacement
          : ["Routed", "Declined"].includes(evaluation.right._tag)
      })
    )
  })

  it("toPromotionDecision stores what was decided", () => {
    const promotedAt = DateTime.unsafeMake(9_000)
    const routed = evaluate(record({ label: "Name" }), ctx, byLabel)
    expect(Routing.toPromotionDecision(routed, byLabel, promotedAt)).toEqual({
      placement: { primitive: "background", section: "about_user", key: "name" },
      placementKey: `["about_user","name"]`,
      keySource: "label",
      specKey: "test",
      specVersion: "1",
      promotedAt,
      tier: "auto"
    })
    const declinedBySpec = evaluate(record(), ctx, spec(() => null))
    expect(Routing.toPromotionDecision(declinedBySpec, byLabel, promotedAt)).toMatchObject({
      placement: null,
      placementKey: null,
      keySource: null,
      tier: null
    })
  })
})

describe("classifyThenRoute", () => {
  const byTag = spec((
    r
  ) => (r.tags.includes("pet") ? Routing.background("about_user", Routing.recordKey(r).key) : null))

  it.effect("routes with the classifier's tags added, and nothing else", () =>
    Effect.gen(function*() {
      const records = [
        record({ id: "m1", content: "Has a cat named Tom" }),
        record({ id: "m2", content: "Likes jazz" })
      ]
      const routes = yield* Routing.classifyThenRoute(records, ctx, byTag, (batch) =>
        Effect.succeed(batch.map((r) =>
          r.content.includes("cat")
            // A classifier cannot place a record: anything but tags is ignored, and invalid tags are dropped.
            ? ({ tags: ["pet", "", "a\nb"], placement: Routing.background("notes", "x") } as Routing.AdvisorySignals)
            : undefined
        )))
      expect(routes.map((r) => [r.recordId, r.signals.tags, r.evaluation._tag])).toEqual([
        ["m1", ["pet"], "Routed"],
        ["m2", [], "Declined"]
      ])
      expect(routes[0]!.evaluation).toMatchObject({ placement: { section: "about_user" } })
      // The record itself is untouched.
      expect(records[0]!.tags).toEqual([])
    }))

  it.effect("fails with the classifier's error", () =>
    Effect.gen(function*() {
      const result = yield* Effect.either(
        Routing.classifyThenRoute([record()], ctx, byTag, () => Effect.fail("offline"))
      )
      expect(result).toEqual(Either.left("offline"))
    }))

  it.effect("fails with InvalidPlacement when the spec cannot place a classified record", () =>
    Effect.gen(function*() {
      const broken = spec(() => ({ primitive: "background", section: "", key: "x" }))
      const result = yield* Effect.either(
        Routing.classifyThenRoute([record()], ctx, broken, (batch) => Effect.succeed(batch.map(() => undefined)))
      )
      expect(Either.isLeft(result) && result.left).toBeInstanceOf(Routing.InvalidPlacement)
    }))
})

describe("purity", () => {
  it("the routing, preset and overlay modules emit nothing: no logs, metrics, pubsub or console", () => {
    const files = [
      "Routing.ts",
      "RoutingPresets.ts",
      "MemoryOverlay.ts",
      "internal/memoryOverlay.ts",
      "internal/fnv1a64.ts",
      "internal/addressTokens.ts",
      "internal/deepFreeze.ts"
    ]
    for (const file of files) {
      const source = readFileSync(new URL(`../src/${file}`, import.meta.url), "utf8")
      for (const forbidden of [/Effect\.log/, /\bMetric\b/, /\bPubSub\b/, /\bconsole\./, /\bTracer\b/, /withSpan/]) {
        expect({ file, emits: forbidden.test(source) }).toEqual({ file, emits: false })
      }
    }
  })
})
