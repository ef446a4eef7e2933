import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  MemoryLimits,
  type MemoryRecord,
  MemoryStore,
  ProjectionLayout,
  PromotionStore,
  SearchTokenizer,
  TelemetryStore,
  TokenEstimator
} from "@engram/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"

/** A memory store that records every read (get, list, search) it serves. */
const spiedStore = () => {
  const reads: Array<string> = []
  const layer = Layer.effect(
    MemoryStore.MemoryStore,
    Effect.map(MemoryStore.MemoryStore, (inner): MemoryStore.Service => ({
      ...inner,
      get: (ids, options) => Effect.zipRight(Effect.sync(() => reads.push("get")), inner.get(ids, options)),
      list: (query) =>
        Effect.zipRight(Effect.sync(() => reads.push(`list ${JSON.stringify(query)}`)), inner.list(query)),
      search: (text, options) =>
        Effect.zipRight(Effect.sync(() => reads.push(`search ${text}`)), inner.search(text, options))
    }))
  ).pipe(Layer.provide(MemoryStore.layerMemory))
  return { reads, layer }
}

const world = (settings: Partial<ContextProjection.ProjectionSettings> = {}) => {
  const spy = spiedStore()
  const stores = Layer.mergeAll(
    spy.layer,
    PromotionStore.layerMemory,
    TelemetryStore.layerMemory,
    IdGenerator.sequential("mem")
  )
  return {
    reads: spy.reads,
    layer: Layer.effect(ContextProjection.ContextProjection, ContextProjection.make(settings)).pipe(
      Layer.provideMerge(stores)
    )
  }
}

/** Writes each input in its own call, one second apart, so creation order is newest-last. */
const write = (...inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const out: Array<MemoryRecord.MemoryRecord> = []
    for (const input of inputs) {
      out.push(...(yield* store.write([input])))
      yield* TestClock.adjust("1 second")
    }
    return out
  })

/**
 * A store with one of everything: an always-on profile, recallable facts (one rejected, one in
 * a scope the agent does not read), the summary of a prior session, and the summary of the
 * current session.
 */
const seed = Effect.gen(function*() {
  const [name, staging, rejected, elsewhere, prior, weather, current] = yield* write(
    { content: "My name is Doug", kind: "profile", label: "name", deliveryPolicy: "always", sourceType: "operator" },
    { content: "The staging database is db-2", kind: "fact", sourceType: "operator" },
    { content: "The staging database is db-9", kind: "fact", sourceType: "conversation" },
    { content: "The staging database of project x is db-7", kind: "fact", scope: "project:x", sourceType: "operator" },
    ContextProjection.summaryInput("s-41", "Planned the staging database migration to Postgres"),
    ContextProjection.summaryInput("s-40", "Talked about the weather"),
    ContextProjection.summaryInput("s-now", "This very session, about the staging database")
  )
  yield* Effect.flatMap(MemoryStore.MemoryStore, (store) => store.setReviewState(rejected!.id, "rejected"))
  return {
    name: name!,
    staging: staging!,
    rejected: rejected!,
    elsewhere: elsewhere!,
    prior: prior!,
    weather: weather!,
    current: current!
  }
})

const request = (fields: Partial<ContextProjection.ProjectionRequest> = {}): ContextProjection.ProjectionRequest => ({
  sessionId: "s-now",
  turn: 0,
  query: "which staging database?",
  scopes: ["global"],
  mode: "native",
  workingState: "goal: migrate staging\nstep: 2 of 3",
  skills: [{ name: "deploy", description: "ship a build to staging" }],
  ...fields
})

const project = (fields: Partial<ContextProjection.ProjectionRequest> = {}) =>
  Effect.flatMap(ContextProjection.ContextProjection, (projection) => projection.project(request(fields)))

const injections = (sessionId = "s-now") =>
  Effect.flatMap(TelemetryStore.TelemetryStore, (telemetry) => telemetry.listInjections(sessionId))

describe("ContextProjection modes (one test per cell of the mode table)", () => {
  it.effect("native: working state, always-on, skills, prior-session digest and recall, in that order", () => {
    const { layer } = world()
    return Effect.gen(function*() {
      const m = yield* seed
      const p = yield* project()
      expect(p.mode).toBe("native")
      expect(p.sections.map((s) => [s.label, s.status])).toEqual([
        ["working_state", "included"],
        ["always_on_memory", "included"],
        ["skills_index", "included"],
        ["prior_sessions", "included"],
        ["recalled_memory", "included"]
      ])
      expect(p.text).toBe(
        [
          "<working_state>\ngoal: migrate staging\nstep: 2 of 3\n</working_state>",
          "<skills_index>\n- deploy: ship a build to staging\n</skills_index>",
          [
            "<injected_memory>",
            ProjectionLayout.UNTRUSTED_FRAMING,
            "<always_on_memory>",
            `- [${m.name.id} · profile · name] My name is Doug`,
            "</always_on_memory>",
            "<prior_sessions>",
            `- [session s-40 · 1970-01-01T00:00:05.000Z] Talked about the weather`,
            `- [session s-41 · 1970-01-01T00:00:04.000Z] Planned the staging database migration to Postgres`,
            "</prior_sessions>",
            "<recalled_memory>",
            `- [${m.staging.id} · fact] The staging database is db-2`,
            "</recalled_memory>",
            "</injected_memory>"
          ].join("\n")
        ].join("\n\n")
      )
      // never: the rejected fact, another scope's fact, this session's own summary
      for (const id of [m.rejected.id, m.elsewhere.id, m.current.id]) expect(p.text).not.toContain(id)
      expect(p.injection.priorSessionIds).toEqual(["s-40", "s-41"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("external: the same bytes as native for the same store, query and state; logged as external", () => {
    const { layer } = world()
    return Effect.gen(function*() {
      yield* seed
      const native = yield* project({ mode: "native", turn: 0 })
      const external = yield* project({ mode: "external", turn: 1 })
      expect(external.text).toBe(native.text)
      expect(external.sections).toEqual(native.sections)
      expect(external.injection).toEqual(native.injection)
      expect(external.budget).toEqual(native.budget)
      const log = yield* injections()
      expect(log.rows.map((r) => [r.turn, r.mode])).toEqual([[0, "native"], [1, "external"]])
      expect(log.rows[1]!.memoryIds).toEqual(native.injection.memoryIds)
    }).pipe(Effect.provide(layer))
  })

  it.effect("subagent: nothing read, nothing projected, nothing logged", () => {
    const { layer, reads } = world()
    return Effect.gen(function*() {
      yield* seed
      reads.length = 0
      const p = yield* project({ mode: "subagent" })
      expect(p.isEmpty).toBe(true)
      expect(p.text).toBe("")
      expect(p.sections).toEqual([])
      expect(p.budget.suppressed).toEqual(ProjectionLayout.SECTION_ORDER)
      expect(reads).toEqual([])
      expect((yield* injections()).rows).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("autonomous: the digest is suppressed (not even read); always-on and recall still delivered", () => {
    const { layer, reads } = world()
    return Effect.gen(function*() {
      const m = yield* seed
      reads.length = 0
      const p = yield* project({ mode: "autonomous" })
      expect(p.sections.map((s) => s.label)).toEqual([
        "working_state",
        "always_on_memory",
        "skills_index",
        "recalled_memory"
      ])
      expect(p.budget.suppressed).toEqual(["prior_sessions"])
      expect(p.text).not.toContain("<prior_sessions>")
      expect(p.injection.memoryIds).toEqual([m.name.id, m.staging.id])
      expect(reads.some((read) => read.includes("episode"))).toBe(false)
    }).pipe(Effect.provide(layer))
  })

  it.effect("incognito: working state and skills only; memory never read; the row names no memory", () => {
    const { layer, reads } = world()
    return Effect.gen(function*() {
      yield* seed
      reads.length = 0
      const p = yield* project({ mode: "incognito" })
      expect(reads).toEqual([])
      expect(p.text).toBe(
        "<working_state>\ngoal: migrate staging\nstep: 2 of 3\n</working_state>\n\n" +
          "<skills_index>\n- deploy: ship a build to staging\n</skills_index>"
      )
      expect(p.text).not.toContain(ProjectionLayout.ENVELOPE_OPEN)
      expect(p.injection.memoryIds).toEqual([])
      const log = yield* injections()
      expect(log.rows).toHaveLength(1)
      expect(log.rows[0]).toMatchObject({
        mode: "incognito",
        memoryIds: [],
        sectionLabels: ["working_state", "skills_index"]
      })
    }).pipe(Effect.provide(layer))
  })
})

describe("ContextProjection injection log", () => {
  it.effect("writes one row per recorded projection: session, turn, delivered memories and sections, time", () => {
    const { layer } = world()
    return Effect.gen(function*() {
      const m = yield* seed
      yield* project({ turn: 0 })
      yield* TestClock.adjust("1 minute")
      yield* project({ turn: 1, query: "weather tomorrow", workingState: "" })
      yield* project({ turn: 2, record: false })
      const log = yield* injections()
      expect(log.skipped).toBe(0)
      expect(log.rows.map((row) => ({ turn: row.turn, memoryIds: row.memoryIds, sectionLabels: row.sectionLabels })))
        .toEqual([
          {
            turn: 0,
            memoryIds: [m.name.id, m.weather.id, m.prior.id, m.staging.id],
            sectionLabels: ["working_state", "always_on_memory", "skills_index", "prior_sessions", "recalled_memory"]
          },
          {
            turn: 1,
            memoryIds: [m.name.id, m.weather.id, m.prior.id],
            sectionLabels: ["always_on_memory", "skills_index", "prior_sessions"]
          }
        ])
      expect(log.rows.map((row) => row.at.epochMillis)).toEqual([7_000, 67_000])
      expect((yield* injections("s-41")).rows).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a resumed turn writes its own row with the same turn number", () => {
    const { layer } = world()
    return Effect.gen(function*() {
      yield* seed
      yield* project({ turn: 3 })
      yield* project({ turn: 3, query: "approved, go on" })
      expect((yield* injections()).rows.map((row) => row.turn)).toEqual([3, 3])
    }).pipe(Effect.provide(layer))
  })
})

describe("ContextProjection budget", () => {
  const many = (n: number) =>
    Array.from({ length: n }, (_, i): MemoryRecord.MemoryWriteInput => ({
      content: `Deploy note ${i}: ${"the deploy pipeline runs the smoke tests first. ".repeat(6)}`,
      kind: "fact",
      sourceType: "operator"
    }))

  it.effect("never exceeds the budget: recall is shed (lowest score first), never-dropped sections stay whole", () => {
    // A fixed token budget wins over the window's share.
    const { layer } = world({ budgetTokens: 4_000, recallLimit: 200 })
    return Effect.gen(function*() {
      yield* seed
      yield* Effect.flatMap(MemoryStore.MemoryStore, (store) => store.write(many(200)))
      const p = yield* project({ query: "deploy" })
      expect(p.budget.budgetTokens).toBe(4_000)
      expect(p.budget.budgetChars).toBeNull()
      expect(p.budget.usedChars).toBe(p.text.length)
      // Counted line by line by the default (o200k_base), the figure is the count of the whole text.
      expect(p.budget.usedTokens).toBe(yield* TokenEstimator.estimate(p.text))
      expect(p.budget.usedTokens).toBeLessThanOrEqual(4_000)
      expect(p.section("recalled_memory")?.status).toBe("truncated")
      expect(p.budget.shed.length).toBeGreaterThan(0)
      expect(p.budget.shed.every((item) => item.section === "recalled_memory")).toBe(true)
      for (const label of ["working_state", "always_on_memory", "skills_index"] as const) {
        expect(p.section(label)?.status).toBe("included")
      }
      expect(p.budget.warnings).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("budgetPct 0 is unbounded: every hit up to the recall limit is delivered", () => {
    const { layer } = world({ budgetPct: 0, recallLimit: 200 })
    return Effect.gen(function*() {
      yield* Effect.flatMap(MemoryStore.MemoryStore, (store) => store.write(many(200)))
      const p = yield* project({ query: "deploy" })
      expect(p.budget.budgetChars).toBeNull()
      expect(p.budget.budgetTokens).toBeNull()
      expect(p.section("recalled_memory")).toMatchObject({ status: "included", items: 200, shed: 0 })
      expect(p.budget.usedTokens).toBeGreaterThan(4_000)
    }).pipe(Effect.provide(layer))
  })

  it.effect("working state and always-on are never dropped: over budget alone, delivered whole with a warning", () => {
    const { layer } = world({ contextWindowTokens: 10_000 })
    return Effect.gen(function*() {
      yield* seed
      const huge = `plan:\n${"- a step that must not be lost\n".repeat(700)}`
      const p = yield* project({ workingState: huge })
      expect(p.text).toContain(huge.trim())
      expect(p.text).toContain("My name is Doug")
      expect(p.budget.usedTokens).toBeGreaterThan(4_000)
      expect(p.budget.protectedTokens).toBe(p.budget.usedTokens)
      expect(p.section("recalled_memory")?.status).toBe("dropped")
      expect(p.section("prior_sessions")?.status).toBe("dropped")
      expect(p.budget.warnings.map((w) => w.code)).toEqual(["protected-over-budget"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("token figures come from the TokenEstimator in context", () => {
    const { layer } = world()
    return Effect.gen(function*() {
      yield* seed
      const p = yield* project().pipe(
        Effect.provideService(TokenEstimator.TokenEstimator, TokenEstimator.make((text) => text.length))
      )
      expect(p.budget.usedTokens).toBe(p.text.length)
      const q = yield* project().pipe(Effect.provide(TokenEstimator.layerHeuristic))
      expect(q.budget.usedTokens).toBe(Math.ceil(q.text.length / 4))
      // Without a layer: o200k_base, the whole text's count and every section's.
      const r = yield* project()
      expect(r.budget.usedTokens).toBe(yield* TokenEstimator.estimate(r.text))
      const bpe = yield* TokenEstimator.resolve
      for (const section of r.sections) {
        const block = r.text.slice(r.text.indexOf(`<${section.label}>`), r.text.indexOf(`</${section.label}>`)) +
          `</${section.label}>`
        expect(section.tokens).toBe(bpe.estimate(block))
      }
    }).pipe(Effect.provide(layer))
  })

  it.effect("the budget is held in the tokens of the TokenEstimator in context", () => {
    // 4,000 tokens; an estimator counting one token per char makes that 4,000 chars.
    const { layer } = world({ contextWindowTokens: 50_000, budgetPct: 8, recallLimit: 200 })
    return Effect.gen(function*() {
      yield* seed
      yield* Effect.flatMap(MemoryStore.MemoryStore, (store) => store.write(many(200)))
      const perChar = yield* project({ query: "deploy" }).pipe(
        Effect.provideService(TokenEstimator.TokenEstimator, TokenEstimator.make((text) => text.length))
      )
      expect(perChar.budget.budgetTokens).toBe(4_000)
      expect(perChar.text.length).toBeLessThanOrEqual(4_000)
      expect(perChar.budget.shed.length).toBeGreaterThan(0)
      const quarter = yield* project({ query: "deploy" }).pipe(Effect.provide(TokenEstimator.layerHeuristic))
      expect(quarter.text.length).toBeGreaterThan(12_000)
      expect(quarter.text.length).toBeLessThanOrEqual(16_000)
      // The default: 4,000 o200k_base tokens, however many chars that is.
      const real = yield* project({ query: "deploy" })
      const counted = yield* TokenEstimator.estimate(real.text)
      expect(counted).toBeLessThanOrEqual(4_000)
      expect(counted).toBeGreaterThan(3_900)
    }).pipe(Effect.provide(layer))
  })
})

describe("ContextProjection prior-session digest", () => {
  const sessions = Effect.gen(function*() {
    yield* write(
      ContextProjection.summaryInput("s-1", "Chose Postgres for the billing service"),
      ContextProjection.summaryInput("s-2", "Planned the garden"),
      ContextProjection.summaryInput("s-3", "Went over the billing invoices"),
      ContextProjection.summaryInput("s-now", "The billing service, again")
    )
  })

  it.effect("newest: the newest other sessions, up to the limit; never the current session", () => {
    const { layer } = world({ digestLimit: 2 })
    return Effect.gen(function*() {
      yield* sessions
      const p = yield* project({ query: "billing" })
      expect(p.injection.priorSessionIds).toEqual(["s-3", "s-2"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("relevant: only sessions the store's keyword search finds for the query, most overlap first", () => {
    const { layer, reads } = world({ digest: "relevant" })
    return Effect.gen(function*() {
      yield* sessions
      reads.length = 0
      const p = yield* project({ query: "the billing service" })
      expect(p.injection.priorSessionIds).toEqual(["s-1", "s-3"])
      // The store is searched for the content words only (as the tokenizer forms them): "the" would
      // match every summary.
      expect(reads).toContain(`search ${SearchTokenizer.tokenize("billing service").join(" ")}`)
      const none = yield* project({ query: "quantum chromodynamics" })
      expect(none.section("prior_sessions")).toBeUndefined()
    }).pipe(Effect.provide(layer))
  })

  it.effect("off: no digest", () => {
    const { layer } = world({ digest: "off" })
    return Effect.gen(function*() {
      yield* sessions
      const p = yield* project({ query: "billing" })
      expect(p.section("prior_sessions")).toBeUndefined()
    }).pipe(Effect.provide(layer))
  })

  it.effect("a newer summary of a session replaces the older one; a superseded summary is never used", () => {
    const { layer } = world()
    return Effect.gen(function*() {
      const [old] = yield* write(ContextProjection.summaryInput("s-1", "First draft of the summary"))
      yield* write(ContextProjection.summaryInput("s-1", "Second draft of the summary"))
      const p = yield* project()
      expect(p.text).toContain("Second draft")
      expect(p.text).not.toContain("First draft")
      yield* Effect.flatMap(
        MemoryStore.MemoryStore,
        (store) => store.supersede(old!.id, { content: "Rewritten summary", kind: "episode" })
      )
      const q = yield* project()
      expect(q.text).not.toContain("First draft")
      expect(q.injection.priorSessionIds).toEqual(["s-1"])
    }).pipe(Effect.provide(layer))
  })
})

describe("ContextProjection prior-session digest: scopes, stopwords, newest summary", () => {
  // Two projects and a session-scoped summary: an agent reading project:a sees project:a's only.
  const scoped = write(
    ContextProjection.summaryInput("s-a1", "Migrated the billing database", { scope: "project:a" }),
    ContextProjection.summaryInput("s-b1", "Migrated the billing database of project b", { scope: "project:b" }),
    { ...ContextProjection.summaryInput("s-x", "Billing database notes, session scoped"), scope: "session:s-x" },
    // An ordinary episode of project:a names no session: it is no summary.
    { content: "The billing database went down once", kind: "episode", scope: "project:a", sourceType: "operator" }
  )

  for (const digest of ["newest", "relevant"] as const) {
    it.effect(`${digest}: reads only the summaries of the request's scopes`, () => {
      const { layer } = world({ digest })
      return Effect.gen(function*() {
        yield* scoped
        const a = yield* project({ query: "billing database", scopes: ["project:a"] })
        expect(a.injection.priorSessionIds).toEqual(["s-a1"])
        expect(a.text).not.toContain("project b")
        expect(a.text).not.toContain("session scoped")
        const both = yield* project({ query: "billing database", scopes: ["project:a", "session:s-x"] })
        expect([...both.injection.priorSessionIds].sort()).toEqual(["s-a1", "s-x"])
        const global = yield* project({ query: "billing database", scopes: ["global"] })
        expect(global.section("prior_sessions")).toBeUndefined()
      }).pipe(Effect.provide(layer))
    })
  }

  it.effect("relevant: a shared stopword is no overlap", () => {
    const { layer } = world({ digest: "relevant" })
    return Effect.gen(function*() {
      yield* write(ContextProjection.summaryInput("s-1", "We went over the garden plans"))
      const p = yield* project({ query: "what is the status of the deploy" })
      expect(p.section("prior_sessions")).toBeUndefined()
      const q = yield* project({ query: "what about the garden" })
      expect(q.injection.priorSessionIds).toEqual(["s-1"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("relevant: an older summary never stands in for a newest one that does not match", () => {
    const { layer } = world({ digest: "relevant" })
    return Effect.gen(function*() {
      yield* write(
        ContextProjection.summaryInput("s-1", "Planned the Kubernetes upgrade"),
        ContextProjection.summaryInput("s-1", "Cooked a risotto"),
        ContextProjection.summaryInput("s-2", "Reviewed the Kubernetes dashboards")
      )
      const p = yield* project({ query: "kubernetes" })
      expect(p.injection.priorSessionIds).toEqual(["s-2"])
      expect(p.text).not.toContain("upgrade")
      expect(p.text).not.toContain("risotto")
    }).pipe(Effect.provide(layer))
  })
})

describe("ContextProjection delivery rules", () => {
  it.effect("on_demand records are never projected, however well they match; always and retrieved are", () => {
    const { layer, reads } = world()
    return Effect.gen(function*() {
      const [demand, retrieved, always] = yield* write(
        { content: "The vault code is 4711", kind: "fact", deliveryPolicy: "on_demand", sourceType: "operator" },
        { content: "The vault is in the basement", kind: "fact", sourceType: "operator" },
        { content: "Never open the vault alone", kind: "standing", deliveryPolicy: "always", sourceType: "operator" }
      )
      const p = yield* project({ query: "vault code" })
      expect(p.text).not.toContain("4711")
      expect(p.injection.memoryIds).toEqual([always!.id, retrieved!.id])
      expect(p.injection.memoryIds).not.toContain(demand!.id)
      // Recall never asked the store for it, so it took no recall slot (the composer would withhold it too).
      expect(p.budget.withheld.map((item) => item.ref)).not.toContain(demand!.id)
      expect(reads.some((read) => read.startsWith("search"))).toBe(true)
    }).pipe(Effect.provide(layer))
  })

  it.effect("ids the stable prefix composed are withheld; a digest summary is not recalled twice", () => {
    const { layer } = world()
    return Effect.gen(function*() {
      const m = yield* seed
      const p = yield* project({ inPrefix: [m.name.id], scopes: ["global", "session:s-41"] })
      expect(p.text).not.toContain("My name is Doug")
      expect(p.budget.withheld).toContainEqual({ section: "always_on_memory", ref: m.name.id, reason: "in-prefix" })
      expect(p.injection.memoryIds.filter((id) => id === m.prior.id)).toHaveLength(1)
      expect(p.section("recalled_memory")?.memoryIds).not.toContain(m.prior.id)
    }).pipe(Effect.provide(layer))
  })

  it.effect("expired records stop being delivered once the clock passes their expiry", () => {
    const { layer } = world()
    return Effect.gen(function*() {
      yield* write({ content: "The staging database is db-3 this week", kind: "fact", expiresInDays: 1 })
      expect((yield* project()).text).toContain("db-3")
      yield* TestClock.adjust("2 days")
      expect((yield* project()).text).not.toContain("db-3")
    }).pipe(Effect.provide(layer))
  })

  it.effect("an invalid session id or turn fails with ProjectionFailure and logs nothing", () => {
    const { layer } = world()
    return Effect.gen(function*() {
      const bad = yield* Effect.either(project({ sessionId: "has space" }))
      expect(Either.isLeft(bad) && bad.left._tag).toBe("ProjectionFailure")
      expect(Either.isLeft(bad) && bad.left.message).toContain(`"has space" is not a session id`)
      const negative = yield* Effect.either(project({ turn: -1 }))
      expect(Either.isLeft(negative) && negative.left.message).toContain("turn must be a non-negative integer")
      expect((yield* injections("has space")).rows).toEqual([])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a store failure surfaces as ProjectionFailure naming the session and turn", () => {
    const failing = Layer.succeed(
      MemoryStore.MemoryStore,
      {
        capabilities: { search: "keyword" },
        write: () => Effect.die("unused"),
        restore: () => Effect.die("unused"),
        get: () => Effect.die("unused"),
        list: () => Effect.fail(new (class extends Error {})("disk on fire") as never),
        search: () => Effect.die("unused"),
        setReviewState: () => Effect.die("unused"),
        supersede: () => Effect.die("unused"),
        expire: () => Effect.die("unused"),
        corroborate: () => Effect.die("unused"),
        forget: () => Effect.die("unused"),
        neighbours: () => Effect.die("unused"),
        tombstones: () => Effect.die("unused")
      } satisfies MemoryStore.Service
    )
    const layer = ContextProjection.layer.pipe(
      Layer.provide(Layer.mergeAll(failing, PromotionStore.layerMemory, TelemetryStore.layerMemory))
    )
    return Effect.gen(function*() {
      const result = yield* Effect.either(project({ turn: 4 }))
      expect(Either.isLeft(result) && result.left.message).toBe(
        "projecting context for session s-now, turn 4 failed: disk on fire"
      )
    }).pipe(Effect.provide(layer))
  })
})

describe("ContextProjection settings", () => {
  it("decodes settings from config, filling defaults and naming a bad field", () => {
    expect(ContextProjection.decodeSettings({})).toEqual(Either.right(ContextProjection.defaultSettings))
    expect(ContextProjection.defaultSettings).toMatchObject({
      contextWindowTokens: 200_000,
      digestLimit: 3,
      recallRelevance: "content-words"
    })
    // Recall is sized by the budget: no cap unless one is set (decision 0181).
    expect(ContextProjection.defaultSettings.recallLimit).toBeUndefined()
    expect(ProjectionLayout.budgetFromContextWindow({ contextWindowTokens: 200_000 })).toEqual(
      ContextProjection.budgetOf(ContextProjection.defaultSettings)
    )
    const bad = ContextProjection.decodeSettings({ budgetPct: 120 })
    expect(Either.isLeft(bad) && bad.left.message).toContain("budgetPct")
    const tiny = ContextProjection.decodeSettings({ budgetTokens: 255 })
    expect(Either.isLeft(tiny) && tiny.left.message).toContain("budgetTokens must be an integer of at least 256")
    expect(ContextProjection.decodeSettings({ budgetTokens: 256 })).toMatchObject(Either.right({ budgetTokens: 256 }))
  })
})

describe("ContextProjection with an operator message over the store's query limit", () => {
  it.effect("recalls on the message clamped to MemoryLimits.maxQueryChars instead of failing the turn", () => {
    const { layer, reads } = world()
    return Effect.gen(function*() {
      const m = yield* seed
      const query = `which staging database? ${"pasted log line ".repeat(1_000)}`
      const p = yield* project({ query })
      expect(p.text).toContain(m.staging.id)
      const searches = reads.filter((read) => read.startsWith("search "))
      expect(searches.length).toBeGreaterThan(0)
      for (const read of searches) expect(read.length - "search ".length).toBeLessThanOrEqual(200)
    }).pipe(Effect.provide(layer), Effect.provide(MemoryLimits.layer({ maxQueryChars: 200 })))
  })
})

describe("settings with the call (decision 0182)", () => {
  it("merges levels in order; a level naming any budget field replaces the budget below it whole", () => {
    const base = ContextProjection.decodeSettings({ budgetTokens: 3_000, neighbourWindow: 1 })
    if (Either.isLeft(base)) throw base.left
    // The agent's fixed budget, then a call's window: the call's window decides, not the agent's tokens.
    const merged = ContextProjection.mergeOverrides({ budgetTokens: 6_000, recallLimit: 50 }, {
      contextWindowTokens: 32_000
    })
    expect(merged).toEqual({ recallLimit: 50, contextWindowTokens: 32_000 })
    const settings = ContextProjection.settingsFor(base.right, merged)
    expect(ContextProjection.budgetOf(settings)).toEqual(ProjectionLayout.tokens(2_560))
    expect(settings).toMatchObject({ recallLimit: 50, neighbourWindow: 1 })
    // A level without a budget field keeps the one below.
    expect(ContextProjection.budgetOf(ContextProjection.settingsFor(base.right, { neighbourWindow: 0 }))).toEqual(
      ProjectionLayout.tokens(3_000)
    )
    expect(ContextProjection.settingsFor(base.right)).toBe(base.right)
    expect(ContextProjection.mergeOverrides(undefined, undefined)).toBeUndefined()
  })
})
