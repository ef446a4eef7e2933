/**
 * The eval's one-current-truth families (issue 38): facts that change under the same label, a
 * slot's proposals approved in every order, and updated values ranked before what they replaced.
 * Saves go through the model's `memory_save` handler (the save gate, promotion), corrections found
 * by extraction through `Extraction.writeCandidate` and the operator's review through
 * `Extraction.review` (what the CLI, HTTP API and MCP call); every question is a fresh
 * `NativeRuntime.fromConfig` + `NativeRuntime.runTurn` whose first request, as `PromptObserver`
 * captured it, is what is checked.
 *
 * @internal
 */
import { MemoryQuery, type MemoryRecord, MemoryStore, RoutingPresets, RoutingSpecs, Slot } from "@engram/core"
import { Extraction, MemoryTools, NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type { EvalCase, EvalOptions } from "../Eval.js"
import { check, companionBackground, type FamilyResult, type Session, type Stores } from "./evalFamilies.js"
import { scriptedTurnLayer } from "./scriptedTurn.js"

const spec = RoutingPresets.userBackground
const configOf = (scope: MemoryRecord.Scope) => ({ scope, background: companionBackground, spec }) as const

let scopeCounter = 0
const freshScope = (family: string): MemoryRecord.Scope => `project:eval-${family}-${++scopeCounter}`

/** One case per item, each in a fresh scope of the family's and a session of its own. */
const eachCase = <A, E>(
  session: Session<E>,
  family: string,
  items: ReadonlyArray<A>,
  nameOf: (item: A) => string,
  body: (item: A, scope: MemoryRecord.Scope) => Effect.Effect<string | undefined, unknown, Stores>
): Effect.Effect<FamilyResult, E> =>
  Effect.gen(function*() {
    const cases: Array<EvalCase> = []
    for (const item of items) cases.push(yield* session(check(family, nameOf(item))(body(item, freshScope(family)))))
    return { cases, routed: [] }
  })

/** The first request of one turn asking `question`, as the model received it. */
const ask = (scope: MemoryRecord.Scope, question: string, options: EvalOptions) =>
  Effect.gen(function*() {
    const native = yield* NativeRuntime.fromConfig({
      persona: "You are a friendly companion. Be warm and brief.",
      background: companionBackground,
      spec: spec.key,
      scope,
      scopes: [scope],
      ...(options.projection !== undefined ? { projection: options.projection } : {})
    }).pipe(Effect.provide(RoutingSpecs.layer({ [spec.key]: spec })))
    yield* NativeRuntime.runTurn({ agent: native, sessionId: "eval", input: question })
    const [first] = yield* PromptObserver.captured
    if (first === undefined) return yield* Effect.dieMessage("the model was never called")
    return PromptObserver.requestText(first.request)
  }).pipe(Effect.provide(scriptedTurnLayer(options, () => [ScriptedModel.text("Hello!")])))

/** What the model saves, as it would: on a conflict it makes the retry the envelope names. */
const save = (scope: MemoryRecord.Scope, params: { readonly content: string; readonly label?: string }) =>
  Effect.gen(function*() {
    const tools = yield* MemoryTools.make(configOf(scope))
    const first = yield* tools.memory_save({ kind: "fact", ...params })
    if (first.status !== "conflict" || first.retry === undefined) return first
    return yield* tools.memory_save(first.retry.arguments)
  })

/** The live values (not pending proposals) of `slot` in `scope`. */
const liveIn = (scope: MemoryRecord.Scope, slot: string) =>
  Effect.gen(function*() {
    const at = yield* DateTime.now
    const page = yield* (yield* MemoryStore.MemoryStore).list({ scopes: [scope], deliverable: true, limit: 1000 })
    return page.records.filter((r) =>
      MemoryQuery.isDeliverable(r, at) && Extraction.proposedHolder(r) === undefined &&
      Slot.slotOf(spec, r)?.key === slot
    )
  })

/** `present` once in `text`, before any of `older` (which may be missing). */
const ranksFirst = (text: string, present: string, older: ReadonlyArray<string>): string | undefined => {
  const times = text.split(present).length - 1
  if (times !== 1) return `"${present}" appears ${times} times in the request`
  const at = text.indexOf(present)
  const before = older.filter((value) => {
    const i = text.indexOf(value)
    return i >= 0 && i < at
  })
  return before.length > 0 ? `the request shows ${before.map((v) => `"${v}"`).join(", ")} first` : undefined
}

// ---------------------------------------------------------------------------------------------
// same-label-facts
// ---------------------------------------------------------------------------------------------

interface LabelScenario {
  readonly name: string
  readonly saves: ReadonlyArray<{ readonly content: string; readonly label?: string }>
  readonly question: string
  /** Every one must be live and in the request once. */
  readonly present: ReadonlyArray<string>
  readonly absent: ReadonlyArray<string>
}

const labelScenarios: ReadonlyArray<LabelScenario> = [
  {
    name: "standup 9am → 10am, both labelled standup",
    saves: [{ content: "The standup is at 9am", label: "standup" }, {
      content: "The standup is at 10am",
      label: "standup"
    }],
    question: "When is the standup?",
    present: ["The standup is at 10am"],
    absent: ["9am"]
  },
  {
    name: "standup 9am → 10am, reworded under another label",
    saves: [{ content: "The team standup is at 9am", label: "standup" }, {
      content: "Our standup moved to 10am",
      label: "meeting"
    }],
    question: "When is our standup?",
    present: ["Our standup moved to 10am"],
    absent: ["9am"]
  },
  {
    // Only the label names this slot: the content states no key and no subject pattern.
    name: "book club first Monday → second Tuesday, both labelled book club",
    saves: [{ content: "Book club meets on the first Monday", label: "book club" }, {
      content: "Book club meets on the second Tuesday",
      label: "book club"
    }],
    question: "When does book club meet?",
    present: ["Book club meets on the second Tuesday"],
    absent: ["first Monday"]
  },
  {
    name: "deploy day Tuesday → Thursday, the second unlabelled",
    saves: [{ content: "Atlas's deploy day is Tuesday", label: "deploy" }, {
      content: "The deploy day for Atlas is Thursday"
    }],
    question: "Which day do we deploy Atlas?",
    present: ["The deploy day for Atlas is Thursday"],
    absent: ["Tuesday"]
  },
  {
    name: "two distinct facts under one label both land",
    saves: [{ content: "The Atlas deploy day is Tuesday", label: "project" }, {
      content: "The Atlas repository is hosted on GitHub",
      label: "project"
    }],
    question: "What do you know about the Atlas deploy day and repository?",
    present: ["The Atlas deploy day is Tuesday", "The Atlas repository is hosted on GitHub"],
    absent: []
  }
]

const sameLabelFacts = <E>(session: Session<E>, options: EvalOptions): Effect.Effect<FamilyResult, E> =>
  eachCase(
    session,
    "same-label-facts",
    labelScenarios,
    (scenario) => scenario.name,
    (scenario, scope) =>
      Effect.gen(function*() {
        for (const params of scenario.saves) {
          const result = yield* save(scope, params)
          if (result.status !== "saved") return `saving "${params.content}" answered ${result.status}`
        }
        const text = yield* ask(scope, scenario.question, options)
        for (const present of scenario.present) {
          const times = text.split(present).length - 1
          if (times !== 1) return `"${present}" appears ${times} times in the request`
        }
        const stale = scenario.absent.filter((value) => text.includes(value))
        if (stale.length > 0) return `the request also holds ${stale.map((v) => `"${v}"`).join(", ")}`
        return undefined
      })
  )

// ---------------------------------------------------------------------------------------------
// approval-orders
// ---------------------------------------------------------------------------------------------

type Step = "confirm-10" | "confirm-11" | "reject-10" | "reject-11" | "reject-current" | "restate-10"

/** The orders an operator may review two corrections of "9am" in, and the value each leaves. */
const orders: ReadonlyArray<{ readonly steps: ReadonlyArray<Step>; readonly current: number }> = [
  { steps: ["confirm-10", "confirm-11"], current: 11 },
  { steps: ["confirm-11", "confirm-10"], current: 11 },
  { steps: ["confirm-11", "reject-10"], current: 11 },
  { steps: ["reject-11", "confirm-10"], current: 10 },
  { steps: ["confirm-10", "reject-11"], current: 10 },
  { steps: ["confirm-11", "confirm-10", "reject-current"], current: 10 },
  { steps: ["confirm-10", "confirm-11", "reject-current"], current: 10 },
  { steps: ["confirm-11", "reject-current"], current: 9 },
  { steps: ["restate-10", "confirm-11", "confirm-10"], current: 11 },
  { steps: ["reject-10", "reject-11"], current: 9 }
]

const slotOfStandup = "~standup"

const approvalOrders = <E>(session: Session<E>, options: EvalOptions): Effect.Effect<FamilyResult, E> =>
  eachCase(
    session,
    "approval-orders",
    orders,
    (order) => order.steps.join(", "),
    (order, scope) =>
      Effect.gen(function*() {
        const memory = configOf(scope)
        const memories = yield* MemoryStore.MemoryStore
        const [first] = yield* memories.write([{
          content: "The team standup is at 9am",
          kind: "fact",
          scope,
          sourceType: "operator"
        }])
        yield* memories.setReviewState(first!.id, "confirmed")
        const propose = (value: number, wording: string) =>
          Effect.gen(function*() {
            // Statements a moment apart: which was said later is what the order is about.
            yield* Effect.sleep("3 millis")
            return yield* Extraction.writeCandidate(
              { content: wording.replace("N", String(value)), kind: "fact", turns: [1] },
              { sessionId: `s-${value}`, memory, shown: new Map(), turns: [1] }
            )
          })
        const p10 = yield* propose(10, "Our standup moved to Nam")
        const p11 = yield* propose(11, "Update: the standup is now at Nam")
        if (p10._tag !== "Proposed" || p11._tag !== "Proposed") return `the corrections were not proposed`
        const ids = { 10: p10.id, 11: p11.id } as const
        for (const step of order.steps) {
          if (step === "restate-10") {
            const again = yield* propose(10, "FYI the standup is at N am now")
            if (again._tag !== "Corroborated") return `restating 10am answered ${again._tag}`
            // The restatement counts on the value it restates, with its session (decision 0174).
            const [holder] = (yield* memories.get([again.holder])).records
            if (holder?.corroboration?.sessions.includes("s-10") !== true) {
              return `restating 10am left ${again.holder} uncorroborated`
            }
          } else if (step === "reject-current") {
            const [live] = yield* liveIn(scope, slotOfStandup)
            if (live === undefined) return "no value to reject"
            yield* Extraction.review(live.id, "rejected")
          } else {
            const [verb, value] = step.split("-") as ["confirm" | "reject", "10" | "11"]
            yield* Extraction.review(ids[value], verb === "confirm" ? "confirmed" : "rejected")
          }
        }
        const live = yield* liveIn(scope, slotOfStandup)
        const values = live.map((r) => /(\d+)\s*am/.exec(r.content)?.[1])
        if (values.length !== 1 || values[0] !== String(order.current)) {
          return `live values ${JSON.stringify(values)}, expected [${order.current}]`
        }
        const text = yield* ask(scope, "When is our standup?", options)
        const others = [9, 10, 11].filter((v) => v !== order.current).map((v) => new RegExp(`\\b${v}\\s*am\\b`))
        if (!text.includes(live[0]!.content)) return "the request does not show the current value"
        return others.some((re) => re.test(text)) ? "the request shows another value" : undefined
      })
  )

// ---------------------------------------------------------------------------------------------
// knowledge-update
// ---------------------------------------------------------------------------------------------

const updates: ReadonlyArray<
  { readonly name: string; readonly old: string; readonly updated: string; readonly question: string }
> = [
  {
    name: "standup",
    old: "The team standup is at 9am",
    updated: "The team standup moved to 10am",
    question: "When is the team standup?"
  },
  {
    name: "deploy day",
    old: "Atlas's deploy day is Tuesday",
    updated: "Atlas's deploy day is now Thursday",
    question: "What is Atlas's deploy day?"
  },
  {
    name: "pet's name",
    old: "My dog's name is Rex",
    updated: "My dog's name is Max since the adoption papers",
    question: "What is my dog's name?"
  },
  { name: "location", old: "I live in Oslo", updated: "I moved to Bergen", question: "Where do I live now?" },
  {
    name: "time zone",
    old: "The user's time zone is Europe/Oslo",
    updated: "The user's time zone is America/Denver",
    question: "What time zone am I in?"
  }
]

const knowledgeUpdate = <E>(session: Session<E>, options: EvalOptions): Effect.Effect<FamilyResult, E> =>
  eachCase(
    session,
    "knowledge-update",
    updates.flatMap((update) => (["model", "extraction"] as const).map((via) => ({ update, via }))),
    ({ update, via }) => `${update.name} (${via})`,
    ({ update, via }, scope) =>
      Effect.gen(function*() {
        const saved = yield* save(scope, { content: update.old })
        if (saved.status !== "saved") return `saving the old value answered ${saved.status}`
        if (via === "model") {
          const changed = yield* save(scope, { content: update.updated })
          if (changed.status !== "saved") return `saving the update answered ${changed.status}`
        } else {
          yield* Effect.sleep("3 millis")
          const outcome = yield* Extraction.writeCandidate(
            { content: update.updated, kind: "fact", turns: [1] },
            { sessionId: "s-1", memory: configOf(scope), shown: new Map(), turns: [1] }
          )
          if (outcome._tag !== "Proposed") return `the update was ${outcome._tag}, not proposed`
          yield* Extraction.review(outcome.id, "confirmed")
        }
        const text = yield* ask(scope, update.question, options)
        return ranksFirst(text, update.updated, [update.old])
      })
  )

// ---------------------------------------------------------------------------------------------
// as-of
// ---------------------------------------------------------------------------------------------

const DAY_MS = 86_400_000

/**
 * Each update said in a session sixty days ago (the old value) and thirty days ago (the update),
 * extracted later and approved now: a search as of forty-five days ago finds the old value alone,
 * as of twenty days ago and now the update alone (decision 0173).
 */
const asOf = <E>(session: Session<E>): Effect.Effect<FamilyResult, E> =>
  eachCase(session, "as-of", updates, (update) => update.name, (update, scope) =>
    Effect.gen(function*() {
      const now = DateTime.toEpochMillis(yield* DateTime.now)
      const daysAgo = (days: number) => DateTime.unsafeMake(now - days * DAY_MS)
      const said = (content: string, days: number) =>
        Extraction.writeCandidate({ content, kind: "fact", turns: [1] }, {
          sessionId: `s-${days}`,
          memory: configOf(scope),
          shown: new Map(),
          turns: [1],
          turnTimes: new Map([[1, daysAgo(days)]])
        })
      const first = yield* said(update.old, 60)
      if (first._tag !== "Saved") return `the old value was ${first._tag}, not saved`
      const second = yield* said(update.updated, 30)
      if (second._tag !== "Proposed") return `the update was ${second._tag}, not proposed`
      yield* Extraction.review(second.id, "confirmed")
      const store = yield* MemoryStore.MemoryStore
      const read = (at: DateTime.Utc | undefined) =>
        Effect.map(
          store.search(update.question, {
            scopes: [scope],
            deliverable: true,
            ...(at !== undefined ? { asOf: at } : {})
          }),
          (found) => found.hits.map((hit) => hit.record.content)
        )
      const expectations: ReadonlyArray<readonly [string, DateTime.Utc | undefined, string]> = [
        ["45 days ago", daysAgo(45), update.old],
        ["20 days ago", daysAgo(20), update.updated],
        ["now", undefined, update.updated]
      ]
      for (const [when, at, value] of expectations) {
        const values = (yield* read(at)).filter((content) => content === update.old || content === update.updated)
        if (values.length !== 1 || values[0] !== value) {
          return `as of ${when} the search found ${JSON.stringify(values)}, not ${JSON.stringify([value])}`
        }
      }
      return undefined
    }))

export const families = [
  {
    name: "same-label-facts",
    hard: true,
    description: "a fact changed under the same label (or another, or none) replaces the old; a distinct one lands",
    run: sameLabelFacts
  },
  {
    name: "approval-orders",
    hard: true,
    description: "two corrections of one slot reviewed in any order: the newest confirmed value is the one in force",
    run: approvalOrders
  },
  {
    name: "knowledge-update",
    hard: true,
    description: "an updated value (saved by the model, or extracted and approved) ranks first; the old is history",
    run: knowledgeUpdate
  },
  {
    name: "as-of",
    hard: true,
    description: "a value said sixty days ago and its update thirty days ago: as of each time, the value of then",
    run: <E>(session: Session<E>, _options: EvalOptions) => asOf(session)
  }
] as const
