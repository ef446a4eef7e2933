/**
 * The routing eval: does a fact the user told the agent reach the request the model is sent, on
 * the path that ships? Behind `npm run eval` and `engram eval`, which run it on a fresh temporary
 * SQLite file.
 *
 * Every identity family runs real sessions: `StablePrefix.buildAgent` + `NativeRuntime.runTurn`
 * with a scripted model that behaves one way (saves the ideal label, another spelling, the wrong
 * kind, no label; corrects, under the same label or an alias, and retries or gives up after the
 * conflict), then asks questions, each in a fresh session, and reads the first request of the turn
 * as `PromptObserver` captured it — the bytes the model would receive. A question passes when the
 * fact appears in that request exactly once, no stale or competing value appears, and no content
 * hash does. Each family reports a **rate** (cases passed / cases) and a **routing accuracy**
 * (scenarios whose fact sits, alone, at the address the preset should give it, read from the
 * promotion rows), and the mean size of the requests it checked.
 *
 * Families: `ideal-save`, `label-spellings`, `wrong-kind`, `no-label`, `correction-retry`,
 * `correction-alias`, `correction-gives-up`, `opt-out`, `guarded-pending`, `over-budget`, and
 * identity under real use (issue 20) — `correction-unlabelled` (a correction under an unknown
 * label or none), `unknown-label` (a name under a label the vocabulary lacks), `many-facts` (the
 * name, then 100 newer facts), `scope-isolation` (another user's `global` name), `scope-narrower` (a session's
 * value over the project's prefix) and
 * `joined-scripts` (names that need ZWNJ/ZWJ), and one current truth (issue 38) — `correction-any-label`,
 * `multi-part-identity`, `restatement` — (the identity families); `same-label-facts`,
 * `approval-orders`, `knowledge-update` (a slot's value changed, reviewed in any order, ranked
 * first) and `as-of` (a search as of a past time finds the value of then); then `route-cases` (every overlay outcome for each preset) and
 * `vocabulary-isolation` (a user fact never lands in a project section). All are hard: one
 * failing case fails the run. Then the poisoning screen on Engram's attack corpus:
 * `poisoning-screen` (the tuning half; hard, on its targets — every style at least 90% held, at
 * most 2% of benign look-alikes), `poisoning-screen-heldout` (the half never tuned on; soft,
 * reported), `poisoning-screen-blind` (a third written without reading the rules; soft, decision
 * 0133) and `poisoning-screen-qa` (question-and-answer plants written before the rules for them;
 * soft, decision 0135), with a table of detection per style and false positives per part.
 *
 * What it does not prove: the model is scripted, so it measures what Engram does with each
 * behaviour, not how often a real model behaves that way; and "in the request" is not "used in
 * the answer".
 *
 * Each session builds the store layer anew, so with a file-backed store a "new session" really
 * reopens the database. The store must start empty: the eval refuses to write into a store that
 * already holds memories.
 *
 * @since 0.1.0
 */
import {
  type ContextProjection,
  ErrorClass,
  type MemoryStore,
  type MemoryStoreError,
  type PromotionStore,
  type Routing
} from "@engram/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as internal from "./internal/evalFamilies.js"
import * as extraction from "./internal/extractionFamilies.js"
import * as poisoning from "./internal/poisoningFamilies.js"
import * as truth from "./internal/truthFamilies.js"

/**
 * One checked case: its family, what it checks, whether it passed and, when it failed, why.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvalCase {
  readonly family: string
  readonly name: string
  readonly passed: boolean
  readonly detail?: string | undefined
  /** The UTF-8 size of the request the case checked (its prompt messages as sent), when it checked one. */
  readonly bytes?: number | undefined
}

/**
 * How the eval configures the agents of its identity families — real configuration, for checking
 * that the eval notices when it is wrong: `spec` replaces the `user-background` routing spec (a
 * spec that declines profile records, say); `projection` is the agents' own projection settings
 * (their config's `projection`; `identityLimit: 0` turns the identity tier off). Defaults: the
 * preset and the default settings.
 *
 * `families` runs only the families so named (in the eval's own order), and the report and its
 * verdict cover only them; absent, every family runs. A name that is not a family (see
 * {@link families}), or an empty list, fails the run with {@link EvalUnknownFamily} before the
 * store is touched.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvalOptions {
  readonly spec?: Routing.MemoryRoutingSpec | undefined
  readonly projection?: ContextProjection.ProjectionOverrides | undefined
  readonly families?: ReadonlyArray<string> | undefined
}

/**
 * A family of cases. It passes when every case passes and every scenario was routed as expected;
 * a hard family that does not pass fails the run.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvalFamily {
  readonly name: string
  readonly hard: boolean
  readonly description: string
  readonly cases: ReadonlyArray<EvalCase>
  readonly passed: boolean
  /** Cases passed / cases (0 to 1). */
  readonly rate: number
  /** Scenarios whose fact sits, alone, at the address it should (0 to 1); `null` with none. */
  readonly routingAccuracy: number | null
  /** Scenarios routed as expected, and scenarios. */
  readonly routing: { readonly correct: number; readonly total: number }
  /** Why each scenario that was not routed as expected was not. */
  readonly routingProblems: ReadonlyArray<string>
  /** The mean UTF-8 size of the requests the family checked; `null` when it checked none. */
  readonly meanRequestBytes: number | null
  /** For an extraction family: the extraction calls and tokens it spent and the memories it extracted. */
  readonly extraction?: { readonly calls: number; readonly tokens: number; readonly memories: number } | undefined
  /**
   * For a poisoning-screen family: the corpus part it read (a half, the blind third or the Q&A
   * probe) and, per attack style (and for the benign look-alikes), how many texts the screen
   * flagged. Such a family passes on its targets (every style at least 90% flagged, at most 2% of
   * look-alikes), not on every case.
   */
  readonly screen?: {
    readonly half: "tune" | "holdout" | "blind" | "qa"
    readonly groups: ReadonlyArray<
      { readonly group: string; readonly attack: boolean; readonly flagged: number; readonly total: number }
    >
  } | undefined
}

/**
 * The whole run: every family, and whether every hard family passed.
 *
 * @since 0.1.0
 * @category models
 */
export interface EvalReport {
  readonly families: ReadonlyArray<EvalFamily>
  readonly passed: boolean
}

/**
 * The store the eval was pointed at already holds memories. The eval writes its own fixtures and
 * never runs against a database someone uses.
 *
 * @since 0.1.0
 * @category errors
 */
export class EvalStoreNotEmpty extends ErrorClass.TaggedError<EvalStoreNotEmpty>()("EvalStoreNotEmpty", {}, {
  errorClass: "Conflict",
  message: () => "the eval needs an empty store, and this one already holds memories; point it at a new file"
}) {}

/**
 * The family filter named a family the eval does not have (or named none at all): `unknown` holds
 * the names it does not know, `known` every family's name.
 *
 * @since 0.1.0
 * @category errors
 */
export class EvalUnknownFamily extends ErrorClass.TaggedError<EvalUnknownFamily>()("EvalUnknownFamily", {
  unknown: Schema.Array(Schema.String),
  known: Schema.Array(Schema.String)
}, {
  errorClass: "InvalidInput",
  message: (self) =>
    (self.unknown.length === 0
      ? "the family filter names no family"
      : `no eval famil${self.unknown.length === 1 ? "y" : "ies"} named ${
        self.unknown.map((name) => JSON.stringify(name)).join(", ")
      }`) + `; the families are: ${self.known.join(", ")}`
}) {}

/**
 * The families, in the order they run, with whether each is hard.
 *
 * @since 0.1.0
 * @category constants
 */
export const families: ReadonlyArray<{ readonly name: string; readonly hard: boolean; readonly description: string }> =
  [...internal.families, ...truth.families, ...extraction.families, ...poisoning.families].map((
    { description, hard, name }
  ) => ({
    name,
    hard,
    description
  }))

/**
 * Checks a family filter: succeeds with the names when every one is a family (and there is at
 * least one), fails with {@link EvalUnknownFamily} otherwise.
 *
 * @since 0.1.0
 * @category running
 */
export const checkFamilies = (
  names: ReadonlyArray<string>
): Effect.Effect<ReadonlyArray<string>, EvalUnknownFamily> => {
  const known = families.map((family) => family.name)
  const unknown = names.filter((name) => !known.includes(name))
  return names.length === 0 || unknown.length > 0
    ? Effect.fail(new EvalUnknownFamily({ unknown, known }))
    : Effect.succeed(names)
}

/**
 * The phrasings the identity families ask in a new session.
 *
 * @since 0.1.0
 * @category constants
 */
export const identityQuestions: ReadonlyArray<string> = internal.identityQuestions

/**
 * Runs every family (or those `options.families` names) against stores built by `stores` — built
 * anew for each session. Fails only when the filter names an unknown family, or the stores cannot
 * be built, cannot be read, or are not empty; a case that fails is a failed row in the report.
 *
 * @since 0.1.0
 * @category running
 */
export const run = <E>(
  stores: Layer.Layer<MemoryStore.MemoryStore | PromotionStore.PromotionStore, E>,
  options: EvalOptions = {}
): Effect.Effect<EvalReport, E | EvalStoreNotEmpty | EvalUnknownFamily | MemoryStoreError.MemoryStoreFailure> =>
  Effect.gen(function*() {
    const selected = options.families === undefined ? undefined : yield* checkFamilies(options.families)
    const session = internal.sessionOf(stores)
    const empty = yield* session(internal.storeIsEmpty)
    if (!empty) return yield* new EvalStoreNotEmpty()
    const results: Array<EvalFamily> = []
    const all: ReadonlyArray<
      {
        readonly name: string
        readonly hard: boolean
        readonly description: string
        readonly run:
          | typeof internal.families[number]["run"]
          | typeof extraction.families[number]["run"]
          | typeof poisoning.families[number]["run"]
          | typeof truth.families[number]["run"]
      }
    > = [...internal.families, ...truth.families, ...extraction.families, ...poisoning.families]
    for (const family of all) {
      if (selected !== undefined && !selected.includes(family.name)) continue
      const result = yield* family.run(session, options)
      const { cases, routed } = result
      const passed = cases.filter((c) => c.passed).length
      const routingProblems = routed.filter((r): r is string => r !== undefined)
      const correct = routed.length - routingProblems.length
      const sized = cases.flatMap((c) => (c.bytes === undefined ? [] : [c.bytes]))
      results.push({
        name: family.name,
        hard: family.hard,
        description: family.description,
        cases,
        passed: "screen" in result
          ? result.passed
          : cases.length > 0 && passed === cases.length && routingProblems.length === 0,
        rate: cases.length === 0 ? 0 : passed / cases.length,
        routingAccuracy: routed.length === 0 ? null : correct / routed.length,
        routing: { correct, total: routed.length },
        routingProblems,
        meanRequestBytes: sized.length === 0 ? null : Math.round(sized.reduce((a, b) => a + b, 0) / sized.length),
        ...("cost" in result ? { extraction: result.cost as extraction.ExtractionCost } : {}),
        ...("screen" in result ? { screen: result.screen } : {})
      })
    }
    return { families: results, passed: results.every((f) => f.passed || !f.hard) }
  })

const pad = (text: string, width: number) => text + " ".repeat(Math.max(0, width - text.length))

const percent = (value: number | null): string => (value === null ? "-" : `${(value * 100).toFixed(1)}%`)

/** The poisoning screen per group: flagged of total and the share, one column per corpus half. */
const renderScreen = (screens: ReadonlyArray<NonNullable<EvalFamily["screen"]>>): ReadonlyArray<string> => {
  const halves = (["tune", "holdout", "blind", "qa"] as const).filter((half) => screens.some((s) => s.half === half))
  const groups = [...new Set(screens.flatMap((s) => s.groups.map((g) => g.group)))]
  const cell = (half: "tune" | "holdout" | "blind" | "qa", group: string) => {
    const found = screens.find((s) => s.half === half)?.groups.find((g) => g.group === group)
    return found === undefined ? "-" : `${found.flagged}/${found.total} ${percent(found.flagged / found.total)}`
  }
  const header = [
    "poisoning screen: flagged",
    ...halves.map((half) =>
      half === "tune"
        ? "tuning half"
        : half === "holdout"
        ? "held-out half"
        : half === "blind"
        ? "blind third"
        : "Q&A probe"
    )
  ]
  const rows = groups.map((
    group
  ) => [group === "look-alikes" ? "look-alikes (benign)" : group, ...halves.map((h) => cell(h, group))])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => pad(c, widths[i]!)).join("  ").trimEnd()
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)]
}

/**
 * The report as a table, one row per family — hard or soft, cases, rate, routing accuracy, mean
 * request bytes — then each failed case and each misrouted scenario with its reason, then the
 * verdict.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderTable = (report: EvalReport): string => {
  const header = ["family", "kind", "cases", "rate", "routing", "bytes/request"]
  const rows = report.families.map((f) => [
    f.name,
    f.hard ? "hard" : "soft",
    `${f.cases.filter((c) => c.passed).length}/${f.cases.length}`,
    percent(f.rate),
    f.routing.total === 0 ? "-" : `${percent(f.routingAccuracy)} (${f.routing.correct}/${f.routing.total})`,
    f.meanRequestBytes === null ? "-" : String(f.meanRequestBytes)
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((cell, i) => pad(cell, widths[i]!)).join("  ").trimEnd()
  const out = [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)]
  const screened = report.families.flatMap((f) => (f.screen === undefined ? [] : [f.screen]))
  if (screened.length > 0) out.push("", ...renderScreen(screened))
  const failed = report.families.flatMap((f) => f.cases).filter((c) => !c.passed)
  if (failed.length > 0) {
    out.push("", "failed cases:")
    for (const c of failed) out.push(`  ${c.family}  ${c.name}${c.detail !== undefined ? `\n    ↳ ${c.detail}` : ""}`)
  }
  const spent = report.families.flatMap((f) => (f.extraction === undefined ? [] : [f.extraction]))
  if (spent.length > 0) {
    const calls = spent.reduce((n, c) => n + c.calls, 0)
    const tokens = spent.reduce((n, c) => n + c.tokens, 0)
    const memories = spent.reduce((n, c) => n + c.memories, 0)
    const per = (n: number) => (memories === 0 ? "-" : (n / memories).toFixed(1))
    out.push(
      "",
      `extraction: ${calls} model calls, ${tokens} tokens for ${memories} extracted memories ` +
        `(${per(calls)} calls and ${per(tokens)} tokens per memory)`
    )
  }
  const misrouted = report.families.flatMap((f) => f.routingProblems.map((problem) => `  ${f.name}  ${problem}`))
  if (misrouted.length > 0) out.push("", "misrouted scenarios:", ...misrouted)
  const total = report.families.reduce((n, f) => n + f.cases.length, 0)
  out.push("")
  out.push(
    report.passed
      ? `eval passed: ${total} cases in ${report.families.length} famil${
        report.families.length === 1 ? "y" : "ies"
      }, ${failed.length} failed`
      : `eval FAILED: hard families below 100%: ${
        report.families.filter((f) => f.hard && !f.passed).map((f) => f.name).join(", ")
      }`
  )
  return out.join("\n")
}
