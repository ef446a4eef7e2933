import { describe, expect, it } from "@effect/vitest"
import { Background, MemoryOverlay, MemoryRecord, Routing, RoutingPresets } from "@engram/core"
import { DateTime, Either } from "effect"
import * as fc from "fast-check"

let n = 0
const record = (fields: Partial<MemoryRecord.MemoryRecord> = {}): MemoryRecord.MemoryRecord =>
  new MemoryRecord.MemoryRecord({
    id: `m${++n}`,
    content: "The user likes tea",
    kind: "profile",
    tags: [],
    sourceType: "conversation",
    scope: "global",
    deliveryPolicy: "retrieved",
    reviewState: "pending",
    createdAt: DateTime.unsafeMake(1_000 + n),
    ...fields
  })

const userCtx = Routing.routingContext(RoutingPresets.userBackgroundSections)
const projectCtx = Routing.routingContext(RoutingPresets.projectSections)
const both = Routing.routingContext(
  Background.mergeBackground(RoutingPresets.userBackgroundSections, RoutingPresets.projectSections)
)

/** The evaluation of a preset, which places every record (a preset is never broken). */
const evaluate = (...args: Parameters<typeof Routing.evaluateRoute>): Routing.RouteEvaluation =>
  Either.getOrThrowWith(Routing.evaluateRoute(...args), (error) => error)

const where = (spec: Routing.MemoryRoutingSpec, ctx: Routing.RoutingContext, r: Routing.RoutableRecord) => {
  const evaluation = evaluate(r, ctx, spec)
  return evaluation._tag === "Routed"
    ? `${evaluation.placement.section}/${evaluation.placement.key}`
    : evaluation.reason
}

describe("userBackground preset", () => {
  it("declares about_user (auto) and preferences (guarded), empty", () => {
    expect(RoutingPresets.userBackgroundSections.sections.map((s) => [s.id, s.title, s.promotion, s.entries.length]))
      .toEqual([
        ["about_user", "About the User", "auto", 0],
        ["preferences", "Preferences", "guarded", 0]
      ])
  })

  it("routes by kind, tag and label", () => {
    const spec = RoutingPresets.userBackground
    const table: ReadonlyArray<[Partial<MemoryRecord.MemoryRecord>, string]> = [
      [{ kind: "profile", label: "name", content: "My name is Doug" }, "about_user/name"],
      // What the content states beats the label (decision 0170): "call me" is the preferred name.
      [{ kind: "profile", label: "Name", content: "Call me Doug" }, "about_user/preferred_name"],
      [{ kind: "profile", label: "Name", content: "Doug" }, "about_user/name"],
      [{ kind: "profile", label: "home town" }, "about_user/home_town"],
      [{ kind: "profile", content: "Lives in Oslo" }, `about_user/${Routing.contentKey("Lives in Oslo")}`],
      [{ kind: "profile", label: "drink", tags: ["Preference"] }, "preferences/drink"],
      [{ kind: "standing", label: "language", content: "Always answer in French" }, "preferences/language"],
      [{ kind: "profile", label: "first_name", content: "Doug" }, "about_user/name"],
      [{ kind: "profile", label: "Time zone" }, "about_user/time_zone"],
      [{ kind: "fact", label: "name" }, "about_user/name"],
      [{ kind: "note", label: "userName" }, "about_user/name"],
      [{ kind: "fact", label: "pronouns" }, "about_user/pronouns"],
      [{ kind: "fact", label: "favourite colour" }, "spec-declined"],
      [{ kind: "fact" }, "spec-declined"],
      [{ kind: "standing", label: "Length" }, "preferences/response_length"],
      [{ kind: "decision", label: "db" }, "spec-declined"],
      [{ kind: "note" }, "spec-declined"],
      [{ kind: "episode" }, "spec-declined"]
    ]
    for (const [fields, expected] of table) {
      expect([fields, where(spec, userCtx, record(fields))]).toEqual([fields, expected])
    }
  })

  it("declines into a vocabulary the agent did not declare", () => {
    const onlyAbout = Routing.routingContext(
      Background.unsafeMake({ sections: [{ id: "about_user", title: "About", promotion: "auto" }] })
    )
    expect(where(RoutingPresets.userBackground, onlyAbout, record({ kind: "standing" }))).toBe("undeclared-section")
    expect(where(RoutingPresets.userBackground, projectCtx, record({ kind: "profile", label: "name" }))).toBe(
      "undeclared-section"
    )
  })
})

describe("userBackground key vocabulary", () => {
  const spec = RoutingPresets.userBackground
  const vocabulary = RoutingPresets.userBackgroundKeys

  // A declared name as a model might write it: any case, words joined by spaces, `_`, `-` or
  // nothing, padded with punctuation.
  const spelled = (name: string) =>
    fc.record({
      joiner: fc.constantFrom(" ", "_", "-", "  ", " - "),
      upper: fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }),
      pad: fc.constantFrom("", " ", ":", "**", "\"", " ("),
      padEnd: fc.constantFrom("", " ", ":", "**", "\"", ")")
    }).map(({ joiner, pad, padEnd, upper }) => {
      const words = name.split(/[\s_]+/).join(joiner)
      const cased = [...words].map((ch, i) => (upper[i % upper.length] ? ch.toUpperCase() : ch)).join("")
      return `${pad}${cased}${padEnd}`
    })

  const declared = Object.entries(vocabulary).flatMap(([section, keys]) =>
    keys.flatMap((k) => [
      { section, name: k.key, key: k.key, source: "canonical" as const },
      ...(k.aliases ?? []).map((alias) => ({ section, name: alias, key: k.key, source: "alias" as const }))
    ])
  )

  it("declares the profile keys a companion needs, with the aliases models use", () => {
    expect(vocabulary.about_user!.map((k) => k.key)).toEqual(expect.arrayContaining([
      "name",
      "preferred_name",
      "pronouns",
      "location",
      "time_zone",
      "language",
      "occupation",
      "birthday",
      "family",
      "pets"
    ]))
    for (
      const alias of [
        "user_name",
        "first_name",
        "full_name",
        "my_name",
        "called",
        "username",
        "name_of_user",
        "Full Name"
      ]
    ) {
      expect([alias, Routing.foldLabel(spec, "about_user", alias)]).toEqual([alias, {
        key: "name",
        keySource: "alias"
      }])
    }
  })

  it("no name is declared twice in a section, and every canonical key is a slug", () => {
    for (const [section, keys] of Object.entries(vocabulary)) {
      const slugs = keys.flatMap((k) => [k.key, ...(k.aliases ?? [])].map(Routing.slugify))
      expect([section, slugs.length]).toEqual([section, new Set(slugs).size])
      for (const k of keys) expect(Routing.slugify(k.key)).toBe(k.key)
    }
  })

  it("property: every spelling of a declared name folds to its canonical key, and says which rule applied", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...declared).chain((d) => spelled(d.name).map((label) => ({ ...d, label }))),
        ({ key, label, section, source }) => {
          expect(Routing.foldLabel(spec, section, label)).toEqual({ key, keySource: source })
          // Folding is idempotent: the canonical key folds to itself.
          expect(Routing.foldLabel(spec, section, key)).toEqual({ key, keySource: "canonical" })
          return true
        }
      )
    )
  })

  it("property: a profile, fact or note labelled with any spelling of an about_user name lands at its canonical address", () => {
    const aboutUser = declared.filter((d) => d.section === "about_user")
    fc.assert(
      fc.property(
        fc.constantFrom(...aboutUser).chain((d) => spelled(d.name).map((label) => ({ ...d, label }))),
        fc.constantFrom("profile" as const, "fact" as const, "note" as const),
        ({ key, label, source }, kind) => {
          const evaluation = evaluate(record({ kind, label }), userCtx, spec)
          expect(evaluation._tag === "Routed" && [evaluation.placement, evaluation.keySource]).toEqual([
            Routing.background("about_user", key),
            source
          ])
          return true
        }
      )
    )
  })

  it("property: a fact or note whose label is no declared name is declined; a profile keeps its slug", () => {
    const names = new Set(declared.filter((d) => d.section === "about_user").map((d) => Routing.slugify(d.name)))
    const label = fc.string({ minLength: 1, maxLength: 20 }).filter((l) =>
      Routing.slugify(l) !== "" && !names.has(Routing.slugify(l))
    )
    fc.assert(
      fc.property(label, fc.constantFrom("fact" as const, "note" as const), (l, kind) => {
        expect(where(spec, userCtx, record({ kind, label: l }))).toBe("spec-declined")
        const profile = evaluate(record({ kind: "profile", label: l }), userCtx, spec)
        expect(profile._tag === "Routed" && [profile.placement.key, profile.keySource]).toEqual([
          Routing.slugify(l),
          "label"
        ])
        return true
      })
    )
  })
})

describe("project preset", () => {
  it("declares project_state (auto) and conventions (guarded), empty", () => {
    expect(RoutingPresets.projectSections.sections.map((s) => [s.id, s.title, s.promotion])).toEqual([
      ["project_state", "Project State", "auto"],
      ["conventions", "Conventions", "guarded"]
    ])
  })

  it("routes decisions, standing rules and tagged conventions", () => {
    const spec = RoutingPresets.project
    const table: ReadonlyArray<[Partial<MemoryRecord.MemoryRecord>, string]> = [
      [{ kind: "decision", label: "database", content: "We use Postgres" }, "project_state/database"],
      [{ kind: "standing", label: "indent" }, "conventions/indent"],
      [{ kind: "note", label: "commits", tags: ["convention"] }, "conventions/commits"],
      [{ kind: "fact", label: "ci", tags: ["Conventions"] }, "conventions/ci"],
      [{ kind: "fact", label: "ci" }, "spec-declined"],
      [{ kind: "profile", label: "name" }, "spec-declined"],
      [{ kind: "standing", label: "tone", tags: ["preference"] }, "spec-declined"],
      [{ kind: "episode", tags: ["convention"] }, "spec-declined"]
    ]
    for (const [fields, expected] of table) {
      expect([fields, where(spec, projectCtx, record(fields))]).toEqual([fields, expected])
    }
  })

  it("property: a user fact never lands in a project section, even with both vocabularies declared", () => {
    const tag = fc.constantFrom("preference", "preferences", "convention", "pet", "Preference")
    const userFact = fc.record({
      kind: fc.constantFrom(
        "profile" as const,
        "standing" as const,
        "fact" as const,
        "note" as const,
        "decision" as const
      ),
      label: fc.option(fc.constantFrom("name", "project_state", "conventions", "database"), { nil: undefined }),
      tags: fc.array(tag, { maxLength: 3 })
    }).filter((r) => r.kind === "profile" || r.tags.some((t) => t.toLowerCase().startsWith("preference")))
    fc.assert(
      fc.property(userFact, (fields) => {
        const { label, ...rest } = fields
        const r = record(label === undefined ? rest : { ...rest, label })
        const evaluation = evaluate(r, both, RoutingPresets.project)
        expect(evaluation._tag).toBe("Declined")
        return true
      })
    )
  })
})

describe("a fact saved once reaches the prompt", () => {
  it("'My name is Doug' as a profile memory labelled name composes into About the User", () => {
    const saved = record({ kind: "profile", label: "name", content: "My name is Doug", reviewState: "pending" })
    const evaluation = evaluate(saved, userCtx, RoutingPresets.userBackground)
    const decision = Routing.toPromotionDecision(evaluation, RoutingPresets.userBackground, DateTime.unsafeMake(5_000))
    const { background, report } = MemoryOverlay.applyMemoryOverlay(
      RoutingPresets.userBackgroundSections,
      [{ record: saved, ...decision }],
      RoutingPresets.userBackground,
      { now: DateTime.unsafeMake(6_000) }
    )
    expect(Background.renderBackground(background)).toBe("### About the User\n- **name**: My name is Doug")
    expect(MemoryOverlay.composedIds(report)).toEqual([saved.id])
  })

  it("a name saved as a fact labelled first_name composes as the name, and the report says the key came from an alias", () => {
    const saved = record({
      kind: "fact",
      label: "first_name",
      content: "The user's name is Doug",
      reviewState: "pending"
    })
    const evaluation = evaluate(saved, userCtx, RoutingPresets.userBackground)
    const decision = Routing.toPromotionDecision(evaluation, RoutingPresets.userBackground, DateTime.unsafeMake(5_000))
    const { background, report } = MemoryOverlay.applyMemoryOverlay(
      RoutingPresets.userBackgroundSections,
      [{ record: saved, ...decision }],
      RoutingPresets.userBackground,
      { now: DateTime.unsafeMake(6_000) }
    )
    expect(Background.renderBackground(background)).toBe("### About the User\n- **name**: The user's name is Doug")
    expect(report.outcomes).toEqual([expect.objectContaining({
      recordId: saved.id,
      status: "composed",
      address: expect.objectContaining({ section: "about_user", key: "name", keySource: "alias" })
    })])
  })
})
