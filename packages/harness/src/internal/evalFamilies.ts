/**
 * The eval's families: what each one sets up, which sessions it runs and what it checks.
 *
 * The identity families run what ships: every session is a fresh `NativeRuntime.fromConfig` +
 * `NativeRuntime.runTurn` on a scripted model, over the stores the eval was
 * given (built anew, so a file-backed store is reopened), and every check reads the request the
 * model was sent, as `PromptObserver` captured it.
 *
 * @internal
 */
import {
  Background,
  MemoryOverlay,
  MemoryQuery,
  MemoryRecord,
  MemoryStore,
  PromotionStore,
  Routing,
  RoutingPresets,
  RoutingSpecs
} from "@engram/core"
import { AgentBackground, MemoryTools, NativeRuntime, Promotion, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Cause from "effect/Cause"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type { EvalCase, EvalOptions } from "../Eval.js"
import { scriptedTurnLayer } from "./scriptedTurn.js"

/** The stores every family's session provides. */
export type Stores = MemoryStore.MemoryStore | PromotionStore.PromotionStore

/** Runs a body against a freshly built store layer: one session. */
export type Session<E> = <A, E2>(self: Effect.Effect<A, E2, Stores>) => Effect.Effect<A, E | E2>

export const sessionOf = <E>(stores: Layer.Layer<Stores, E>): Session<E> => (self) => Effect.provide(self, stores)

export const storeIsEmpty = Effect.flatMap(
  MemoryStore.MemoryStore,
  (store) => store.list({ limit: 1, includeSuperseded: true })
).pipe(
  Effect.map((page) => page.records.length === 0 && page.skipped === 0),
  Effect.catchTags({ InvalidCursor: Effect.die, InvalidMemoryQuery: Effect.die })
)

/**
 * What a family found: its cases, and per scenario whether the fact landed at the expected address
 * (`undefined`) or what went wrong.
 */
export interface FamilyResult {
  readonly cases: ReadonlyArray<EvalCase>
  readonly routed: ReadonlyArray<string | undefined>
}

interface Family {
  readonly name: string
  readonly hard: boolean
  readonly description: string
  readonly run: <E>(session: Session<E>, options: EvalOptions) => Effect.Effect<FamilyResult, E>
}

const firstLine = (text: string): string => text.split("\n").find((line) => line.trim() !== "")?.trim() ?? text

/** One case: the body returns `undefined` when it passes, or what went wrong. */
export const check =
  (family: string, name: string, bytes?: number) =>
  <R>(body: Effect.Effect<string | undefined, unknown, R>): Effect.Effect<EvalCase, never, R> =>
    body.pipe(
      Effect.map((problem): EvalCase => ({
        family,
        name,
        passed: problem === undefined,
        ...(problem !== undefined ? { detail: problem } : {}),
        ...(bytes !== undefined ? { bytes } : {})
      })),
      Effect.catchAllCause((cause) => {
        const error = Cause.squash(cause)
        const detail = firstLine(error instanceof Error ? error.message : String(error))
        return Effect.succeed<EvalCase>({ family, name, passed: false, detail: `failed: ${detail}` })
      })
    )

const expectThat = (holds: boolean, problem: string): string | undefined => (holds ? undefined : problem)

/** What `memory_save` answered, unless the tool failed. */
const answer = (
  result: { readonly isFailure: boolean; readonly result: unknown }
): MemoryTools.SaveResult | undefined => result.isFailure ? undefined : (result.result as MemoryTools.SaveResult)

const everything = (scope: MemoryRecord.Scope) =>
  Effect.flatMap(
    MemoryStore.MemoryStore,
    (store) => store.list({ scopes: [scope], includeSuperseded: true, limit: 10_000 })
  )

const outcomeOf = (report: MemoryOverlay.OverlayReport, id: string): string => {
  const outcome = report.outcomes.find((o) => o.recordId === id)
  return outcome === undefined ? "no outcome" : outcome.status === "composed" ? "composed" : outcome.reason
}

const utf8 = new TextEncoder()

// ---------------------------------------------------------------------------------------------
// Agents, scripted model behaviours and one session's turn
// ---------------------------------------------------------------------------------------------

const assistant = Background.unsafeMake({
  sections: [{ id: "assistant", title: "Assistant", entries: [{ key: "role", value: "a friendly companion" }] }]
})

export const companionBackground = Background.mergeBackground(assistant, RoutingPresets.userBackgroundSections)

/** The agents the identity families build, as plain agent configuration. */
const agents = {
  /** Declares About the User (auto) and Preferences (guarded). */
  companion: { background: companionBackground },
  /** Declares no user section: every profile record is `undeclared-section`. */
  optOut: { background: assistant },
  /** About the User is guarded: a record the model saves waits for review (`review-required`). */
  guarded: {
    background: Background.mergeBackground(
      assistant,
      Background.unsafeMake({
        sections: RoutingPresets.userBackgroundSections.sections.map((section) => ({
          ...section,
          promotion: "guarded" as const
        }))
      })
    )
  },
  /** About the User holds 10 characters of memory: every fact spills (`over-budget`). */
  overBudget: { background: companionBackground, overlayBudget: { sectionChars: 10 } }
} as const

type Agent = (typeof agents)[keyof typeof agents]

interface SaveParams {
  readonly kind: MemoryRecord.MemoryKind
  readonly content: string
  readonly label?: string | undefined
}

/** One thing the user tells the agent, what the model saves for it, and what it does after a conflict. */
interface Teach {
  readonly input: string
  readonly save: SaveParams
  /** More saves the model makes in the same response, after `save` (100 hobbies, say). */
  readonly more?: ReadonlyArray<SaveParams> | undefined
  /** The scope of the agent this is told to (default: the scenario's); `global`: another user's agent. */
  readonly scope?: MemoryRecord.Scope | undefined
  readonly onConflict?: "retry" | "give-up" | undefined
  /**
   * Where the model takes its label from when it follows the tool's description: the key the
   * description lists for the user's name (no label when it lists none).
   */
  readonly labelFromDescription?: boolean | undefined
}

/** The key `memory_save`'s description lists for the user's name, as a model reading it would find it. */
const nameKeyIn = (description: string | undefined): string | undefined =>
  description === undefined ? undefined : /(?:^|[\s,:])([\w-]+) \(the user's name\)/.exec(description)?.[1]

/**
 * The scripted model of a session: when the operator's input is `teach.input` it calls
 * `memory_save`; answered with a conflict, it makes the call the envelope's `retry` names
 * (`retry`) or stops (`give-up`); otherwise it answers in text.
 */
const behaviour = (teach: Teach | undefined): ScriptedModel.Script => (request) => {
  const pending = ScriptedModel.pendingToolResults(request)
  const last = pending[pending.length - 1]
  if (last !== undefined) {
    const result = last.result as Partial<MemoryTools.SaveResult> | undefined
    if (result?.status === "conflict" && teach?.onConflict === "retry" && result.retry !== undefined) {
      return [ScriptedModel.toolCall("memory_save", result.retry.arguments)]
    }
    return [ScriptedModel.text("Noted.")]
  }
  if (teach === undefined || ScriptedModel.lastUserText(request) !== teach.input) return [ScriptedModel.text("Hello!")]
  if (teach.more !== undefined) {
    return [teach.save, ...teach.more].map((save) => ScriptedModel.toolCall("memory_save", save))
  }
  if (teach.labelFromDescription !== true) return [ScriptedModel.toolCall("memory_save", teach.save)]
  const label = nameKeyIn(request.toolDescriptions?.["memory_save"])
  const { label: _, ...rest } = teach.save
  return [ScriptedModel.toolCall("memory_save", label === undefined ? rest : { ...rest, label })]
}

/**
 * One session: an agent built from the store as it is now, one turn with `input`, and the first
 * request of the turn as the model received it (its text and its size in bytes).
 */
const turn = (
  agent: Agent,
  scope: MemoryRecord.Scope,
  input: string,
  script: ScriptedModel.Script,
  options: EvalOptions,
  scopes: ReadonlyArray<MemoryRecord.Scope> = [scope]
) =>
  Effect.gen(function*() {
    const spec = options.spec ?? RoutingPresets.userBackground
    const native = yield* NativeRuntime.fromConfig({
      persona: "You are a friendly companion. Be warm and brief.",
      background: agent.background,
      spec: spec.key,
      scope,
      scopes,
      ...("overlayBudget" in agent ? { overlayBudget: agent.overlayBudget } : {}),
      ...(options.projection !== undefined ? { projection: options.projection } : {})
    }).pipe(Effect.provide(RoutingSpecs.layer({ [spec.key]: spec })))
    yield* NativeRuntime.runTurn({ agent: native, sessionId: "eval", input })
    const [first] = yield* PromptObserver.captured
    if (first === undefined) return yield* Effect.dieMessage("the model was never called")
    return {
      text: PromptObserver.requestText(first.request),
      bytes: utf8.encode(PromptObserver.modelVisible(first.request)).length
    }
  }).pipe(
    Effect.provide(scriptedTurnLayer(options, script))
  )

// ---------------------------------------------------------------------------------------------
// Identity scenarios
// ---------------------------------------------------------------------------------------------

export const identityQuestions: ReadonlyArray<string> = [
  "what's my name?",
  "who am I?",
  "how should you address me?",
  "What do you call me?",
  "Do you remember me?",
  "Say hi to me properly.",
  "Write a two-line birthday card for me.",
  "Introduce me to my new colleague.",
  "What should my name tag say?",
  "Tell me one thing you know about me.",
  "Who are you talking to right now?",
  "sign this letter for me"
]

/** `count` questions from the list, starting at `from` (wrapping). */
const questions = (from: number, count: number): ReadonlyArray<string> =>
  Array.from({ length: count }, (_, i) => identityQuestions[(from + i) % identityQuestions.length]!)

/**
 * One scenario: what the user told the agent over one or more sessions, then questions, each in
 * a fresh session. Every question's request must hold `present` exactly once and none of
 * `absent` (whole words); the live record holding `present` must sit at `address` (a declared
 * key, or a content-derived key in `section`), and no other live record may share it.
 */
interface Scenario {
  readonly name: string
  readonly agent: Agent
  readonly teach: ReadonlyArray<Teach>
  readonly questions: ReadonlyArray<string>
  readonly present: string
  readonly absent?: ReadonlyArray<string> | undefined
  readonly address: { readonly section: string; readonly key: string | "content" }
  /** The agent reads `global` as well as its own scope. */
  readonly readsGlobal?: boolean | undefined
  /** Narrower scopes the agent reads too (a session's), before its own; `present` lives in the first. */
  readonly readsNarrower?: ReadonlyArray<MemoryRecord.Scope> | undefined
}

const word = (text: string) =>
  new RegExp(`(^|[^\\p{L}\\p{N}])${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^\\p{L}\\p{N}])`, "u")
const CONTENT_KEY_IN_TEXT = /\bc-[0-9a-f]{16}\b/

/** Where the live record holding `content` was placed, and whether that is the expected address, alone. */
const routedAsExpected = (scope: MemoryRecord.Scope, scenario: Scenario, specKey: string) =>
  Effect.gen(function*() {
    const at = yield* DateTime.now
    const live = (yield* everything(scope)).records.filter((r) => MemoryQuery.isDeliverable(r, at))
    const holder = live.find((r) => r.content === scenario.present)
    if (holder === undefined) return `no live record holds "${scenario.present}"`
    const rows = (yield* Effect.flatMap(PromotionStore.PromotionStore, (s) => s.getByRecords(live.map((r) => r.id))))
      .rows
      .filter((row) => row.specKey === specKey)
    const row = rows.find((r) => r.recordId === holder.id)
    const placement = row?.placement ?? null
    if (placement === null) return `the record has no address (${row === undefined ? "not promoted" : "declined"})`
    const { key, section } = scenario.address
    const keyOk = key === "content" ? Routing.isContentKey(placement.key) : placement.key === key
    if (placement.section !== section || !keyOk) {
      return `placed at ${placement.section}/${placement.key}, expected ${section}/${key}`
    }
    const sharing = rows.filter((r) => r.recordId !== holder.id && r.placementKey === row!.placementKey)
    return expectThat(sharing.length === 0, `${sharing.length} other live record(s) share its address`)
  })

let scopeCounter = 0

const runScenarios =
  (family: string, scenarios: ReadonlyArray<Scenario>) =>
  <E>(session: Session<E>, options: EvalOptions): Effect.Effect<FamilyResult, E> =>
    Effect.gen(function*() {
      const cases: Array<EvalCase> = []
      const routed: Array<string | undefined> = []
      const specKey = (options.spec ?? RoutingPresets.userBackground).key
      for (const scenario of scenarios) {
        const scope = `project:eval-${family}-${++scopeCounter}`
        let taught: string | undefined
        const scopes: ReadonlyArray<MemoryRecord.Scope> = [
          ...(scenario.readsNarrower ?? []),
          scope,
          ...(scenario.readsGlobal === true ? ["global"] : [])
        ]
        for (const teach of scenario.teach) {
          const at = teach.scope ?? scope
          const failed = yield* session(
            Effect.either(
              turn(scenario.agent, at, teach.input, behaviour(teach), options, at === scope ? scopes : [at])
            )
          )
          if (Either.isLeft(failed)) taught = `teaching "${teach.input}" failed: ${firstLine(String(failed.left))}`
        }
        const presentIn = scenario.readsNarrower?.[0] ?? scope
        const routing = yield* session(Effect.either(routedAsExpected(presentIn, scenario, specKey)))
        const routingProblem = Either.isLeft(routing) ? `reading the store failed` : routing.right
        routed.push(routingProblem === undefined ? undefined : `${scenario.name}: ${routingProblem}`)
        for (const question of scenario.questions) {
          const asked = yield* session(
            Effect.either(turn(scenario.agent, scope, question, behaviour(undefined), options, scopes))
          )
          const name = `${scenario.name}: "${question}"`
          if (Either.isLeft(asked)) {
            cases.push({ family, name, passed: false, detail: `the turn failed: ${firstLine(String(asked.left))}` })
            continue
          }
          const { bytes, text } = asked.right
          cases.push(
            yield* check(family, name, bytes)(Effect.sync(() => {
              if (taught !== undefined) return taught
              const times = text.split(scenario.present).length - 1
              if (times !== 1) return `"${scenario.present}" appears ${times} times in the request`
              const stale = (scenario.absent ?? []).filter((value) => word(value).test(text))
              if (stale.length > 0) return `the request also holds ${stale.map((v) => `"${v}"`).join(", ")}`
              if (CONTENT_KEY_IN_TEXT.test(text)) return "the request shows a content-derived key"
              return undefined
            }))
          )
        }
      }
      return { cases, routed }
    })

const nameFact = (label: string | undefined, kind: MemoryRecord.MemoryKind = "profile"): Teach => ({
  input: "Hi! My name is Doug, by the way.",
  save: { kind, content: "The user's name is Doug", ...(label !== undefined ? { label } : {}) }
})

const nameAt = { section: "about_user", key: "name" } as const

const identityScenario = (
  name: string,
  agent: Agent,
  teach: Teach,
  asked: ReadonlyArray<string>,
  address: Scenario["address"] = nameAt
): Scenario => ({ name, agent, teach: [teach], questions: asked, present: teach.save.content, address })

// ideal-save: the model does exactly what memory_save's description asks — a profile memory,
// labelled with the key the description lists for the user's name.
const idealSave = runScenarios("ideal-save", [
  identityScenario(
    "profile labelled as the description says",
    agents.companion,
    { ...nameFact(undefined), labelFromDescription: true },
    identityQuestions
  )
])

// label-spellings: the same fact under the labels models actually write.
const spellings = [
  "name",
  "Name",
  "user_name",
  "first_name",
  "full name",
  "my_name",
  "called",
  "username",
  "name_of_user",
  "userName",
  "First Name:",
  "user's name"
]
const labelSpellings = runScenarios(
  "label-spellings",
  spellings.map((label, i) =>
    identityScenario(`label ${JSON.stringify(label)}`, agents.companion, nameFact(label), questions(i, 1))
  )
)

// wrong-kind: a profile fact saved as a fact or a note, under a declared label.
const wrongKinds: ReadonlyArray<
  { readonly teach: Teach; readonly key: string; readonly asked: ReadonlyArray<string> }
> = [
  { teach: nameFact("name", "fact"), key: "name", asked: questions(0, 3) },
  { teach: nameFact("name", "note"), key: "name", asked: questions(3, 3) },
  { teach: nameFact("first_name", "fact"), key: "name", asked: questions(6, 3) },
  { teach: nameFact("Full name", "note"), key: "name", asked: questions(9, 3) },
  {
    teach: {
      input: "I'm in Oslo time.",
      save: { kind: "fact", content: "The user's time zone is Europe/Oslo", label: "timezone" }
    },
    key: "time_zone",
    asked: ["What time is it for me right now?", "When should we schedule my call?"]
  },
  {
    teach: {
      input: "I use they/them.",
      save: { kind: "note", content: "The user's pronouns are they/them", label: "pronouns" }
    },
    key: "pronouns",
    asked: ["Write a short bio of me.", "Introduce me to my new colleague."]
  }
]
const wrongKind = runScenarios(
  "wrong-kind",
  wrongKinds.map(({ asked, key, teach }) =>
    identityScenario(
      `${teach.save.kind} labelled ${JSON.stringify(teach.save.label)}`,
      agents.companion,
      teach,
      asked,
      {
        section: "about_user",
        key
      }
    )
  )
)

// no-label: the model gives no label. A record whose content states a single-valued key ("The
// user's name is Doug") takes that key (decision 0055); any other is keyed by its content, which
// is never shown as a hash.
const noLabel = runScenarios("no-label", [
  identityScenario("profile without a label", agents.companion, nameFact(undefined), questions(0, 6)),
  identityScenario(
    "a second unlabelled profile fact",
    agents.companion,
    { input: "I live in Oslo.", save: { kind: "profile", content: "The user lives in Oslo" } },
    ["Where do I live?", "What's the weather like where I am?", "Recommend a restaurant near me."],
    { section: "about_user", key: "location" }
  ),
  identityScenario(
    "an unlabelled profile fact that states no declared key",
    agents.companion,
    { input: "I love the mountains.", save: { kind: "profile", content: "The user loves hiking in the mountains" } },
    ["Plan a weekend for me.", "Tell me one thing you know about me."],
    { section: "about_user", key: "content" }
  )
])

// Corrections: the user corrects a fact in a later session.
interface Correction {
  readonly what: string
  readonly key: string
  readonly first: Teach
  readonly corrected: { readonly input: string; readonly content: string; readonly aliasLabel: string }
  readonly oldValue: string
  readonly newValue: string
  readonly asked: ReadonlyArray<string>
}

const corrections: ReadonlyArray<Correction> = [
  {
    what: "name",
    key: "name",
    first: nameFact("name"),
    corrected: {
      input: "Actually my name is Douglas.",
      content: "The user's name is Douglas",
      aliasLabel: "first_name"
    },
    oldValue: "Doug",
    newValue: "Douglas",
    asked: questions(0, 4)
  },
  {
    what: "location",
    key: "location",
    first: {
      input: "I live in Oslo.",
      save: { kind: "profile", content: "The user lives in Oslo", label: "location" }
    },
    corrected: { input: "Actually I moved to Bergen.", content: "The user lives in Bergen", aliasLabel: "city" },
    oldValue: "Oslo",
    newValue: "Bergen",
    asked: ["Where do I live?", "Recommend a restaurant near me."]
  },
  {
    what: "time zone",
    key: "time_zone",
    first: {
      input: "I'm on Oslo time.",
      save: { kind: "profile", content: "The user's time zone is Europe/Oslo", label: "time_zone" }
    },
    corrected: {
      input: "Actually I'm on Denver time now.",
      content: "The user's time zone is America/Denver",
      aliasLabel: "timezone"
    },
    oldValue: "Europe/Oslo",
    newValue: "America/Denver",
    asked: ["What time is it for me?", "When should we schedule my call?"]
  },
  {
    what: "occupation",
    key: "occupation",
    first: {
      input: "I'm a nurse.",
      save: { kind: "profile", content: "The user works as a nurse", label: "occupation" }
    },
    corrected: { input: "Actually I became a surgeon.", content: "The user works as a surgeon", aliasLabel: "job" },
    oldValue: "nurse",
    newValue: "surgeon",
    asked: ["What do I do for a living?", "Write a short bio of me."]
  }
]

const correctionScenarios = (mode: "retry" | "alias" | "give-up"): ReadonlyArray<Scenario> =>
  corrections.map((c) => {
    const label = mode === "retry" ? c.first.save.label : c.corrected.aliasLabel
    const fix: Teach = {
      input: c.corrected.input,
      save: { kind: "profile", content: c.corrected.content, label },
      onConflict: mode === "give-up" ? "give-up" : "retry"
    }
    const won = mode !== "give-up"
    return {
      name: `${c.what}: ${c.oldValue} → ${c.newValue} (label ${JSON.stringify(label)})`,
      agent: agents.companion,
      teach: [c.first, fix],
      questions: c.asked,
      present: won ? c.corrected.content : c.first.save.content,
      absent: [won ? c.oldValue : c.newValue],
      address: { section: "about_user", key: c.key }
    }
  })

// opt-out, guarded, over-budget: the prefix does not compose the fact; the identity tier delivers it.
const notComposed = (agent: Agent) => [
  identityScenario("profile labelled name", agent, nameFact("name"), questions(0, 4)),
  identityScenario("profile labelled first_name", agent, nameFact("first_name"), questions(4, 2)),
  identityScenario("fact labelled full name", agent, nameFact("full name", "fact"), questions(6, 2)),
  identityScenario("profile without a label", agent, nameFact(undefined), questions(8, 2)),
  identityScenario(
    "unlabelled profile stating no declared key",
    agent,
    { input: "I love the mountains.", save: { kind: "profile", content: "The user loves hiking in the mountains" } },
    ["Tell me one thing you know about me."],
    { section: "about_user", key: "content" }
  )
]

// ---------------------------------------------------------------------------------------------
// Identity under real use (issue 20): corrections under any label, a name under an unknown label,
// a name among a hundred newer facts, another user's global name, names that need joiners.
// ---------------------------------------------------------------------------------------------

// correction-unlabelled: the correction's label names no declared key, or there is none; its
// content states the key, so the gate meets the old value and the retry replaces it.
const unlabelledCorrections: ReadonlyArray<Scenario> = [
  ...[["moniker", "name"], ["what_to_call_them", "name"], [undefined, "name"]].map(([label]) => ({
    name: `name: Doug → Douglas (label ${label === undefined ? "none" : JSON.stringify(label)})`,
    agent: agents.companion,
    teach: [nameFact("name"), {
      input: "Actually my name is Douglas.",
      save: {
        kind: "profile" as const,
        content: "Actually my name is Douglas",
        ...(label !== undefined ? { label } : {})
      },
      onConflict: "retry" as const
    }],
    questions: questions(0, 3),
    present: "Actually my name is Douglas",
    absent: ["Doug"],
    address: nameAt
  })),
  {
    name: "location: Oslo → Bergen (no label)",
    agent: agents.companion,
    teach: [
      { input: "I live in Oslo.", save: { kind: "profile", content: "The user lives in Oslo", label: "location" } },
      {
        input: "I moved to Bergen.",
        save: { kind: "profile", content: "The user moved to Bergen" },
        onConflict: "retry"
      }
    ],
    questions: ["Where do I live?", "Recommend a restaurant near me."],
    present: "The user moved to Bergen",
    absent: ["Oslo"],
    address: { section: "about_user", key: "location" }
  },
  {
    name: "time zone: Oslo → Denver (label \"clock\", saved as a note)",
    agent: agents.optOut,
    teach: [
      {
        input: "I'm on Oslo time.",
        save: { kind: "profile", content: "The user's time zone is Europe/Oslo", label: "time_zone" }
      },
      {
        input: "I'm on Denver time now.",
        save: { kind: "note", content: "The user's time zone is America/Denver", label: "clock" },
        onConflict: "retry"
      }
    ],
    questions: ["What time is it for me?", "When should we schedule my call?"],
    present: "The user's time zone is America/Denver",
    absent: ["Europe/Oslo"],
    address: { section: "about_user", key: "time_zone" }
  },
  {
    name: "a distinct fact that names someone else still lands beside the name",
    agent: agents.companion,
    teach: [nameFact("name"), { input: "My dog is Rex.", save: { kind: "profile", content: "My dog's name is Rex" } }],
    questions: ["Tell me one thing you know about me.", "who am I?"],
    present: "The user's name is Doug",
    address: nameAt
  }
]

// unknown-label: a name saved as a fact, note or profile under a label the vocabulary lacks.
const unknownLabels: ReadonlyArray<Scenario> = [
  ...([["fact", "moniker"], ["note", "handle_irl"], ["fact", undefined], ["profile", "what_to_call_them"]] as const)
    .flatMap(([kind, label], i) =>
      [agents.companion, agents.optOut].map((agent) =>
        identityScenario(
          `${kind} labelled ${label === undefined ? "nothing" : JSON.stringify(label)} (${
            agent === agents.companion ? "companion" : "opt-out"
          })`,
          agent,
          nameFact(label, kind),
          questions(i * 3, 3)
        )
      )
    )
]

// many-facts: the name, then a hundred newer facts in one response.
const hobbies: ReadonlyArray<SaveParams> = Array.from({ length: 100 }, (_, i) => ({
  kind: "profile",
  content: `The user enjoys hobby number ${i + 1}, which they took up last spring`,
  label: `hobby ${i + 1}`
}))
const longName: Teach = {
  input: "Hi! My name is Douglas, by the way.",
  save: {
    kind: "profile",
    content: "The user's full name is Douglas Alexander Fairweather-Smith of Little Wobbling",
    label: "name"
  }
}
const manyFacts: ReadonlyArray<Scenario> = [agents.companion, agents.optOut, agents.guarded].map((agent) => ({
  name: `the name, then 100 newer facts (${
    agent === agents.companion ? "companion" : agent === agents.optOut ? "opt-out" : "guarded"
  })`,
  agent,
  teach: [longName, { input: "Let me tell you about my hobbies.", save: hobbies[0]!, more: hobbies.slice(1) }],
  questions: questions(0, 4),
  present: longName.save.content,
  address: nameAt
}))

// scope-isolation: another user told a global agent their name; this agent reads global too.
const bob: Teach = {
  input: "Hi, I'm Bob.",
  save: { kind: "profile", content: "The user's name is Bob", label: "name" },
  scope: "global"
}
const scopeIsolation: ReadonlyArray<Scenario> = [agents.companion, agents.optOut, agents.guarded].map((agent) => ({
  name: `another user's global name (${
    agent === agents.companion ? "companion" : agent === agents.optOut ? "opt-out" : "guarded"
  })`,
  agent,
  teach: [bob, nameFact("name")],
  questions: [...questions(0, 3), "Is my name Bob?"],
  present: "The user's name is Doug",
  absent: ["The user's name is Bob"],
  address: nameAt,
  readsGlobal: true
}))

// scope-narrower: the project knows the user as Doug; the session the agent also reads knows
// them as Douglas. The prefix composes the project's scope, yet the prompt shows the session's value, once.
const scopeNarrower: ReadonlyArray<Scenario> = [agents.companion, agents.optOut, agents.guarded].map((agent, i) => {
  const session: MemoryRecord.Scope = `session:eval-narrower-${i}`
  return {
    name: `a session's name over the project's (${
      agent === agents.companion ? "companion" : agent === agents.optOut ? "opt-out" : "guarded"
    })`,
    agent,
    teach: [nameFact("name"), {
      input: "At work, call me Douglas.",
      save: { kind: "profile", content: "The user's name is Douglas", label: "name" },
      scope: session
    }],
    questions: questions(0, 4),
    present: "The user's name is Douglas",
    absent: ["Doug"],
    address: nameAt,
    readsNarrower: [session],
    readsGlobal: true
  }
})

// ---------------------------------------------------------------------------------------------
// One current truth (issue 38): slots, not labels; restatements corroborate.
// ---------------------------------------------------------------------------------------------

// correction-any-label: the correction states the name (or the location) under a label that names
// another key, an unknown one, or none, as any kind; the gate meets the old value by its slot.
const anyLabelCorrections: ReadonlyArray<Scenario> = [
  ...([
    ["profile", "preferred-name"],
    ["fact", "preferred_name"],
    ["note", "nickname"],
    ["fact", "moniker"],
    ["profile", undefined],
    ["fact", "fact"]
  ] as const).map(([kind, label], i): Scenario => ({
    name: `name: Doug → Douglas (${kind} labelled ${label === undefined ? "nothing" : JSON.stringify(label)})`,
    agent: agents.companion,
    teach: [nameFact("name"), {
      input: "Actually, my name is Douglas, not Doug.",
      save: { kind, content: "Actually, my name is Douglas.", ...(label !== undefined ? { label } : {}) },
      onConflict: "retry"
    }],
    questions: questions(i * 2, 2),
    present: "Actually, my name is Douglas.",
    absent: ["The user's name is Doug"],
    address: nameAt
  })),
  {
    name: "location: Oslo → Bergen (fact labelled \"home town\")",
    agent: agents.companion,
    teach: [
      { input: "I live in Oslo.", save: { kind: "profile", content: "The user lives in Oslo", label: "location" } },
      {
        input: "I moved to Bergen last month.",
        save: { kind: "fact", content: "I moved to Bergen last month", label: "home town" },
        onConflict: "retry"
      }
    ],
    questions: ["Where do I live?", "Recommend a restaurant near me."],
    present: "I moved to Bergen last month",
    absent: ["Oslo"],
    address: { section: "about_user", key: "location" }
  }
]

// multi-part-identity: name, surname and preferred name are three slots, and all three reach the
// prompt whatever kind they were saved as.
const identityParts: ReadonlyArray<Teach> = [
  { input: "My name is Douglas.", save: { kind: "fact", content: "The user's name is Douglas", label: "name" } },
  { input: "My surname is Adams.", save: { kind: "fact", content: "The user's surname is Adams", label: "surname" } },
  { input: "Call me Doug.", save: { kind: "profile", content: "Call me Doug", label: "preferred_name" } }
]
const multiPartIdentity: ReadonlyArray<Scenario> = [agents.companion, agents.optOut].flatMap((agent) =>
  ([["name", 0], ["surname", 1], ["preferred_name", 2]] as const).map(([key, part]): Scenario => ({
    name: `${key} beside the other parts (${agent === agents.companion ? "companion" : "opt-out"})`,
    agent,
    teach: identityParts,
    questions: ["who am I?", "What should my name tag say?", "sign this letter for me"],
    present: identityParts[part]!.save.content,
    address: { section: "about_user", key }
  }))
)

// restatement: the same value said again in other words is not written again; the one record
// holding it stays, and the prompt shows it once.
const restatements: ReadonlyArray<Scenario> = [
  ...([["profile", "name"], ["fact", undefined], ["note", "nickname"]] as const).map(([kind, label], i): Scenario => ({
    name: `name restated (${kind} labelled ${label === undefined ? "nothing" : JSON.stringify(label)})`,
    agent: agents.companion,
    teach: [nameFact("name"), {
      input: "Like I said, my name is Doug.",
      save: { kind, content: "Like I said, my name is Doug.", ...(label !== undefined ? { label } : {}) },
      onConflict: "retry"
    }],
    questions: questions(i * 3, 3),
    present: "The user's name is Doug",
    absent: ["Like I said"],
    address: nameAt
  })),
  {
    name: "location restated (no label)",
    agent: agents.companion,
    teach: [
      { input: "I live in Oslo.", save: { kind: "profile", content: "The user lives in Oslo", label: "location" } },
      {
        input: "As I said, I live in Oslo.",
        save: { kind: "profile", content: "As I said, I live in Oslo." },
        onConflict: "retry"
      }
    ],
    questions: ["Where do I live?", "Recommend a restaurant near me."],
    present: "The user lives in Oslo",
    absent: ["As I said"],
    address: { section: "about_user", key: "location" }
  }
]

// joined-scripts: names whose letters or emoji need a joiner reach the prompt byte for byte.
const joinedNames: ReadonlyArray<readonly [string, string]> = [
  ["Persian (ZWNJ)", "\u0645\u0647\u0631\u200C\u0646\u0627\u0632"],
  ["Persian, two joins", "\u0641\u0627\u0637\u0645\u0647\u200C\u0632\u0647\u0631\u0627"],
  ["Devanagari half form (ZWJ)", "\u0915\u094D\u200D\u0937\u093F\u0924\u093F"],
  ["emoji ZWJ sequence", "Sam \u{1F469}\u200D\u{1F4BB}"],
  ["flag sequence", "Rainbow \u{1F3F3}\uFE0F\u200D\u{1F308}"]
]
const joinedScripts: ReadonlyArray<Scenario> = joinedNames.flatMap(([what, name], i) =>
  [agents.companion, agents.optOut].map((agent) =>
    identityScenario(
      `${what} (${agent === agents.companion ? "companion" : "opt-out"})`,
      agent,
      { input: "Remember my name, please.", save: { kind: "profile", content: `My name is ${name}`, label: "name" } },
      questions(i * 2, 2)
    )
  )
)

/** A hard family of scenarios, named once. */
const scenarioFamily = (name: string, description: string, scenarios: ReadonlyArray<Scenario>): Family => ({
  name,
  hard: true,
  description,
  run: runScenarios(name, scenarios)
})

const identityFamilies: ReadonlyArray<Family> = [
  {
    name: "ideal-save",
    hard: true,
    description: "profile memory labelled name; every phrasing in a fresh session shows the name once",
    run: idealSave
  },
  {
    name: "label-spellings",
    hard: true,
    description: `${spellings.length} label spellings of the name fold to one address (about_user/name)`,
    run: labelSpellings
  },
  {
    name: "wrong-kind",
    hard: true,
    description: "a fact or note labelled with a declared profile key is placed in About the User",
    run: wrongKind
  },
  {
    name: "no-label",
    hard: true,
    description: "an unlabelled profile fact is keyed by its content and reaches the prompt without a hash",
    run: noLabel
  },
  scenarioFamily(
    "correction-retry",
    "a correction under the same label: conflict, the envelope's retry (supersedes), only the new value shows",
    correctionScenarios("retry")
  ),
  scenarioFamily(
    "correction-alias",
    "a correction under an alias of the same key: conflict, retry, only the new value shows",
    correctionScenarios("alias")
  ),
  scenarioFamily(
    "correction-gives-up",
    "the model gives up after the conflict: the old value stays, alone (never both)",
    correctionScenarios("give-up")
  ),
  scenarioFamily(
    "opt-out",
    "an agent declaring no user sections gets the name through the identity tier",
    notComposed(agents.optOut)
  ),
  scenarioFamily(
    "guarded-pending",
    "About the User guarded, the record pending review: the identity tier delivers it",
    notComposed(agents.guarded)
  ),
  scenarioFamily(
    "over-budget",
    "About the User over its budget: the spilled fact reaches the prompt through the identity tier",
    notComposed(agents.overBudget)
  ),
  scenarioFamily(
    "correction-unlabelled",
    "a correction under an unknown label, or none: its content states the key, conflict, retry, one value",
    unlabelledCorrections
  ),
  scenarioFamily(
    "unknown-label",
    "a name saved as a fact, note or profile under a label the vocabulary lacks reaches the prompt",
    unknownLabels
  ),
  scenarioFamily(
    "many-facts",
    "the name, then 100 newer facts: importance, not recency, keeps the name in the prompt",
    manyFacts
  ),
  scenarioFamily(
    "scope-isolation",
    "reading global as well: another user's global name never rides along with the user's own",
    scopeIsolation
  ),
  scenarioFamily(
    "scope-narrower",
    "a session's value for a slot the project's prefix composes: the prompt shows the session's, once",
    scopeNarrower
  ),
  scenarioFamily(
    "correction-any-label",
    "a correction stating a held slot under another key's label, an unknown one or none, any kind: one value",
    anyLabelCorrections
  ),
  scenarioFamily(
    "multi-part-identity",
    "name, surname and preferred name are three slots: every part reaches the prompt, once",
    multiPartIdentity
  ),
  scenarioFamily(
    "restatement",
    "a held value said again in other words corroborates its holder: nothing written, shown once",
    restatements
  ),
  scenarioFamily(
    "joined-scripts",
    "names that need ZWNJ/ZWJ (Persian, Devanagari, emoji sequences) reach the prompt byte for byte",
    joinedScripts
  )
]

// ---------------------------------------------------------------------------------------------
// route-cases
// ---------------------------------------------------------------------------------------------

type Expected = "composed" | MemoryOverlay.DeclineReason

interface RouteCase {
  readonly name: string
  readonly expected: Expected
  readonly background: Background.Background
  /** Written in one batch (one `createdAt`); ids are given by the case. */
  readonly inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>
  readonly target: string
  readonly after?: (store: MemoryStore.Service) => Effect.Effect<unknown, unknown>
  readonly budget?: MemoryOverlay.OverlayBudget
}

const sections = (...declared: ReadonlyArray<Background.BackgroundInput["sections"]>): Background.Background =>
  Background.unsafeMake({ sections: declared.flatMap((s) => s ?? []) })

/** The cases every preset runs: `fact` is a record the preset routes into `section` (auto). */
const reasonCases = (preset: {
  readonly key: string
  readonly declared: Background.Background
  readonly section: string
  readonly placed: (id: string, extra?: Partial<MemoryRecord.MemoryWriteInput>) => MemoryRecord.MemoryWriteInput
  readonly guarded: (id: string, extra?: Partial<MemoryRecord.MemoryWriteInput>) => MemoryRecord.MemoryWriteInput
  readonly declined: (id: string) => MemoryRecord.MemoryWriteInput
  readonly guardedSection: string
}): ReadonlyArray<RouteCase> => {
  const id = (n: string) => `${preset.key}-${n}`
  const only = (promotion: Background.PromotionTier, entries: ReadonlyArray<Background.BackgroundEntry> = []) =>
    sections([{ id: preset.section, title: "Slot", promotion, entries }])
  /** A case about one record, `n`, written as `write` makes it. */
  const single = (
    name: string,
    expected: Expected,
    background: Background.Background,
    n: string,
    write: (id: string) => MemoryRecord.MemoryWriteInput,
    rest: Pick<RouteCase, "after" | "budget"> = {}
  ): RouteCase => ({ name, expected, background, inputs: [write(id(n))], target: id(n), ...rest })
  const confirmed = (target: string) => preset.guarded(target, { sourceType: "operator" })
  return [
    single("composed (auto section, pending record)", "composed", preset.declared, "c1", preset.placed),
    single("composed (guarded section, confirmed record)", "composed", preset.declared, "c2", confirmed),
    single("spec-declined", "spec-declined", preset.declared, "d1", preset.declined),
    single(
      "undeclared-section (the agent did not declare the guarded section)",
      "undeclared-section",
      only("auto"),
      "u1",
      preset.guarded
    ),
    single(
      "authored-wins",
      "authored-wins",
      only("auto", [{ key: "slot", value: "written by the author", memoryIds: [] }]),
      "a1",
      (target) => preset.placed(target, { label: "Slot" })
    ),
    single("review-required", "review-required", preset.declared, "r1", preset.guarded),
    single("locked", "locked", only("locked"), "l1", preset.placed),
    single("earned-inert", "earned-inert", only("earned"), "e1", preset.placed),
    single("rejected", "rejected", preset.declared, "j1", preset.placed, {
      after: (store) => store.setReviewState(id("j1"), "rejected")
    }),
    single("expired", "expired", preset.declared, "x1", preset.placed, { after: (store) => store.expire(id("x1")) }),
    single("superseded", "superseded", preset.declared, "s1", preset.placed, {
      after: (store) => store.supersede(id("s1"), { ...preset.placed(id("s2")), content: "The newer value" })
    }),
    {
      // One batch is stamped in input order (decision 0173): the later input is the newer value.
      name: "shadowed (same label, one batch: the later input holds the slot)",
      expected: "shadowed",
      background: preset.declared,
      inputs: [preset.placed(id("h1")), { ...preset.placed(id("h2")), content: "A second value for the same slot" }],
      target: id("h1")
    },
    single("over-budget", "over-budget", preset.declared, "b1", preset.placed, { budget: { sectionChars: 10 } })
  ]
}

const userCases = reasonCases({
  key: "ub",
  declared: RoutingPresets.userBackgroundSections,
  section: "about_user",
  guardedSection: "preferences",
  // Content that states no declared key, so the label alone gives the address (decision 0055).
  placed: (id, extra) => ({ id, kind: "profile", label: "slot", content: "The user grows tomatoes", ...extra }),
  guarded: (id, extra) => ({ id, kind: "standing", label: "length", content: "Keep answers short", ...extra }),
  declined: (id) => ({ id, kind: "episode", content: "We talked about the weather" })
})

const projectCases = reasonCases({
  key: "pj",
  declared: RoutingPresets.projectSections,
  section: "project_state",
  guardedSection: "conventions",
  placed: (id, extra) => ({ id, kind: "decision", label: "slot", content: "We use PostgreSQL 15", ...extra }),
  guarded: (id, extra) => ({
    id,
    kind: "fact",
    tags: ["convention"],
    label: "indent",
    content: "Two-space indents",
    ...extra
  }),
  declined: (id) => ({ id, kind: "profile", label: "name", content: "My name is Doug" })
})

const runRouteCase = (spec: Routing.MemoryRoutingSpec, routeCase: RouteCase, scope: MemoryRecord.Scope) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    yield* store.write(routeCase.inputs.map((input) => ({ ...input, scope })))
    if (routeCase.after !== undefined) yield* routeCase.after(store)
    const records = (yield* everything(scope)).records
    yield* Promotion.promoteNew(records, { background: routeCase.background, spec })
    const composed = yield* AgentBackground.composeAgentBackground({
      background: routeCase.background,
      spec,
      scope,
      budget: routeCase.budget
    })
    const got = outcomeOf(composed.report, routeCase.target)
    return expectThat(got === routeCase.expected, `expected ${routeCase.expected}, got ${got}`)
  })

// Reasons no store can produce through the runtime (composition reads one row per record, from
// one spec), checked on the overlay directly.
const overlayOnlyCases = (): ReadonlyArray<
  { readonly name: string; readonly body: Effect.Effect<string | undefined> }
> => {
  const spec = RoutingPresets.userBackground
  const at = DateTime.unsafeMake(Date.UTC(2026, 0, 1))
  const record = new MemoryRecord.MemoryRecord({
    id: "ov-1",
    content: "My name is Doug",
    kind: "profile",
    label: "name",
    tags: [],
    sourceType: "conversation",
    scope: "global",
    deliveryPolicy: "retrieved",
    reviewState: "pending",
    createdAt: at
  })
  const ctx = Routing.routingContext(RoutingPresets.userBackgroundSections)
  const evaluation = Routing.evaluateRoute(record, ctx, spec)
  const row = (
    routed: Routing.RouteEvaluation,
    promotedAt: DateTime.Utc,
    specKey = spec.key
  ): Routing.PlacedRecord => ({
    record,
    ...Routing.toPromotionDecision(routed, { key: specKey, version: spec.version }, promotedAt)
  })
  const judge = (placed: ReadonlyArray<Routing.PlacedRecord>) =>
    MemoryOverlay.applyMemoryOverlay(RoutingPresets.userBackgroundSections, placed, spec, { now: at }).report
  /** A case's check over the record's route, or the spec's failure to route it. */
  const routed = (body: (routed: Routing.RouteEvaluation) => string | undefined) =>
    Effect.sync(() => Either.match(evaluation, { onLeft: (error) => error.message, onRight: body }))
  return [
    {
      name: "duplicate-row (two rows for one record: the later promotion is used)",
      body: routed((evaluation) => {
        const report = judge([row(evaluation, at), row(evaluation, DateTime.unsafeMake(Date.UTC(2026, 0, 2)))])
        const reasons = report.outcomes.map((o) => (o.status === "composed" ? "composed" : o.reason)).sort().join(",")
        return expectThat(reasons === "composed,duplicate-row", `got ${reasons}`)
      })
    },
    {
      name: "spec-mismatch (a row committed by another spec)",
      body: routed((evaluation) => {
        const got = outcomeOf(judge([row(evaluation, at, "another-spec")]), "ov-1")
        return expectThat(got === "spec-mismatch", `expected spec-mismatch, got ${got}`)
      })
    }
  ]
}

const routeCasesFamily: ContractFamily = {
  name: "route-cases",
  hard: true,
  description: "every overlay outcome for each preset, through the store, promotion and composition",
  run: (session) =>
    session(Effect.gen(function*() {
      const results: Array<EvalCase> = []
      const presets = [
        { spec: RoutingPresets.userBackground, cases: userCases },
        { spec: RoutingPresets.project, cases: projectCases }
      ]
      for (const { cases, spec } of presets) {
        for (const [i, routeCase] of cases.entries()) {
          results.push(
            yield* check("route-cases", `${spec.key}: ${routeCase.name}`)(
              runRouteCase(spec, routeCase, `project:eval-route-${spec.key}-${i}`)
            )
          )
        }
      }
      for (const { body, name } of overlayOnlyCases()) {
        results.push(yield* check("route-cases", `overlay: ${name}`)(body))
      }
      return results
    }))
}

// ---------------------------------------------------------------------------------------------
// vocabulary-isolation
// ---------------------------------------------------------------------------------------------

const userFacts: ReadonlyArray<{ readonly what: string; readonly params: Record<string, unknown> }> = [
  { what: "the user's name", params: { kind: "profile", content: "My name is Doug", label: "name" } },
  {
    what: "a preference",
    params: { kind: "profile", content: "Doug drinks green tea", label: "drink", tags: ["preference"] }
  },
  {
    what: "a fact labelled like a project section",
    params: { kind: "profile", content: "Doug runs the Oslo office", label: "project_state" }
  },
  {
    what: "a fact labelled 'conventions'",
    params: { kind: "profile", content: "Doug likes tabs", label: "conventions" }
  },
  {
    what: "a non-profile fact tagged as a preference",
    params: { kind: "fact", content: "Doug prefers dark mode", label: "theme", tags: ["preferences"] }
  }
]

const projectSectionIds = RoutingPresets.projectSections.sections.map((s) => s.id)

const vocabularyFamily: ContractFamily = {
  name: "vocabulary-isolation",
  hard: true,
  description: "a user fact never lands in a project section, whichever preset routes it",
  run: (session) => {
    const family = "vocabulary-isolation"
    const c = (name: string) => check(family, name)
    const scope = "project:eval-vocabulary"
    const declared = Background.mergeBackground(RoutingPresets.userBackgroundSections, RoutingPresets.projectSections)
    const asProject: MemoryTools.MemoryToolsConfig = { scope, background: declared, spec: RoutingPresets.project }
    const asUser: MemoryTools.MemoryToolsConfig = { scope, background: declared, spec: RoutingPresets.userBackground }
    const control = { kind: "decision", content: "We deploy on Fridays", label: "deploy day" }
    return Effect.gen(function*() {
      const saved = yield* session(Effect.gen(function*() {
        const kit = yield* Effect.provide(MemoryTools.MemoryToolkit, MemoryTools.layer(asProject))
        const ids = new Map<string, string>()
        for (const { params, what } of [...userFacts, { what: "control", params: control }]) {
          const result = yield* Effect.either(kit.handle("memory_save", params as never))
          const saved = Either.isRight(result) ? answer(result.right) : undefined
          if (saved?.status === "saved") ids.set(what, saved.id)
        }
        return ids
      }))
      return yield* session(Effect.gen(function*() {
        const cases: Array<EvalCase> = []
        const inProjectSections = (composed: AgentBackground.ComposedBackground) =>
          composed.background.sections.filter((s) => projectSectionIds.includes(s.id)).flatMap((s) => s.entries)
        // Composed once, read by every case (a failure fails each case, not the run).
        const composeProject = yield* Effect.cached(AgentBackground.composeAgentBackground(asProject))
        const projectText = (project: AgentBackground.ComposedBackground) =>
          inProjectSections(project).map((entry) => String(entry.value)).join("\n")
        for (const { params, what } of userFacts) {
          cases.push(
            yield* c(`project spec: ${what} stays out of the project sections`)(Effect.gen(function*() {
              const project = yield* composeProject
              const id = saved.get(what)
              if (id === undefined) return "the fact was not saved"
              const leaked = inProjectSections(project).some((entry) => entry.memoryIds.includes(id))
              return expectThat(
                !leaked && !projectText(project).includes(String(params.content)),
                "it was composed into a project section"
              )
            }))
          )
        }
        cases.push(
          yield* c("project spec: a project decision still lands in Project State (control)")(Effect.gen(function*() {
            const project = yield* composeProject
            const id = saved.get("control")
            const entry = Background.findEntry(project.background, "project_state", "deploy_day")
            return expectThat(
              id !== undefined && entry?.memoryIds.includes(id) === true,
              "the decision was not composed"
            )
          }))
        )
        cases.push(
          yield* c("user-background spec: the same facts land only in user sections")(Effect.gen(function*() {
            const records = (yield* everything(scope)).records
            yield* Promotion.promoteNew(records, asUser)
            const user = yield* AgentBackground.composeAgentBackground(asUser)
            const ids = userFacts.flatMap(({ what }) => saved.get(what) ?? [])
            const leaked = inProjectSections(user).filter((entry) => entry.memoryIds.some((id) => ids.includes(id)))
            const composedAnywhere = MemoryOverlay.composedIds(user.report).filter((id) => ids.includes(id))
            if (leaked.length > 0) return `composed into a project section: ${leaked.map((e) => e.key).join(", ")}`
            return expectThat(
              composedAnywhere.length > 0,
              "no user fact was composed at all (the check would be vacuous)"
            )
          }))
        )
        return cases
      }))
    })
  }
}

// ---------------------------------------------------------------------------------------------

/** A family of contract checks: each case is itself a routing check. */
interface ContractFamily {
  readonly name: string
  readonly hard: boolean
  readonly description: string
  readonly run: <E>(session: Session<E>) => Effect.Effect<ReadonlyArray<EvalCase>, E>
}

const contract = (family: ContractFamily): Family => ({
  name: family.name,
  hard: family.hard,
  description: family.description,
  run: (session) =>
    Effect.map(family.run(session), (cases) => ({
      cases,
      routed: cases.map((c) => (c.passed ? undefined : `${c.name}: ${c.detail ?? "failed"}`))
    }))
})

export const families: ReadonlyArray<Family> = [
  ...identityFamilies,
  contract(routeCasesFamily),
  contract(vocabularyFamily)
]
