/**
 * The routing eval: end-to-end checks that memory routing keeps its promise on a real store.
 * Behind `npm run eval` and `engram eval`, which run it on a fresh temporary SQLite file.
 *
 * Families (all hard: one failing case fails the run):
 *
 * - `identity-paraphrase` — a model saves "My name is Doug" through `memory_save` (a profile
 *   memory labelled `name`); in a new session the composed prompt — Background with the overlay,
 *   plus recall — holds the name for every phrasing of the question, and holds it once.
 * - `identity-opt-out` — the same save for an agent that declares no user sections: the overlay
 *   declines it (`undeclared-section`) and the profile recall tier still delivers it.
 * - `save-gate` — `memory_save`'s contract: conflicts at a held address, `supersedes`, line
 *   breaks in a label refused, agent-derived provenance, nothing said about composition.
 * - `route-cases` — every overlay outcome (composed and each decline reason) for each preset,
 *   through the store, the promotion step and composition.
 * - `vocabulary-isolation` — a user fact never lands in a project section, whichever preset
 *   routes it.
 *
 * Each session builds the store layer anew, so with a file-backed store a "new session" really
 * reopens the database. The store must start empty: the eval refuses to write into a store that
 * already holds memories.
 *
 * @since 0.1.0
 */
import type { MemoryStore, MemoryStoreError, PromotionStore } from "@engram/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as internal from "./internal/evalFamilies.js"

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
}

/**
 * A family of cases. A hard family fails the run when any of its cases fails.
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
export class EvalStoreNotEmpty extends Schema.TaggedError<EvalStoreNotEmpty>()("EvalStoreNotEmpty", {}) {
  override get message() {
    return "the eval needs an empty store, and this one already holds memories; point it at a new file"
  }
}

/**
 * The families, in the order they run, with whether each is hard.
 *
 * @since 0.1.0
 * @category constants
 */
export const families: ReadonlyArray<{ readonly name: string; readonly hard: boolean; readonly description: string }> =
  internal.families.map(({ description, hard, name }) => ({ name, hard, description }))

/**
 * The phrasings the identity families ask in a new session.
 *
 * @since 0.1.0
 * @category constants
 */
export const identityQuestions: ReadonlyArray<string> = internal.identityQuestions

/**
 * Runs every family against stores built by `stores` — built anew for each session. Fails only
 * when the stores cannot be built, cannot be read, or are not empty; a case that fails is a failed
 * row in the report.
 *
 * @since 0.1.0
 * @category running
 */
export const run = <E>(
  stores: Layer.Layer<MemoryStore.MemoryStore | PromotionStore.PromotionStore, E>
): Effect.Effect<EvalReport, E | EvalStoreNotEmpty | MemoryStoreError.MemoryStoreFailure> =>
  Effect.gen(function*() {
    const session = internal.sessionOf(stores)
    const empty = yield* session(internal.storeIsEmpty)
    if (!empty) return yield* new EvalStoreNotEmpty()
    const results: Array<EvalFamily> = []
    for (const family of internal.families) {
      const cases = yield* family.run(session)
      results.push({
        name: family.name,
        hard: family.hard,
        description: family.description,
        cases,
        passed: cases.every((c) => c.passed)
      })
    }
    return { families: results, passed: results.every((f) => f.passed || !f.hard) }
  })

const pad = (text: string, width: number) => text + " ".repeat(Math.max(0, width - text.length))

/**
 * The report as a table — family, case, result — with the reason under each failed case and a
 * summary per family.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderTable = (report: EvalReport): string => {
  const rows = report.families.flatMap((family) => family.cases)
  const familyWidth = Math.max("family".length, ...rows.map((c) => c.family.length))
  const caseWidth = Math.max("case".length, ...rows.map((c) => c.name.length))
  const line = (family: string, name: string, result: string) =>
    `${pad(family, familyWidth)}  ${pad(name, caseWidth)}  ${result}`.trimEnd()
  const out = [line("family", "case", "result"), line("-".repeat(familyWidth), "-".repeat(caseWidth), "------")]
  for (const c of rows) {
    out.push(line(c.family, c.name, c.passed ? "pass" : "FAIL"))
    if (!c.passed && c.detail !== undefined) out.push(`${" ".repeat(familyWidth + 2)}  ↳ ${c.detail}`)
  }
  out.push("")
  for (const family of report.families) {
    const passed = family.cases.filter((c) => c.passed).length
    out.push(
      `${pad(family.name, familyWidth)}  ${family.hard ? "hard" : "soft"}  ${passed}/${family.cases.length} passed` +
        (family.passed ? "" : "  FAILED")
    )
  }
  const failed = rows.filter((c) => !c.passed).length
  out.push("")
  out.push(
    report.passed
      ? `eval passed: ${rows.length} cases, ${failed} failed`
      : `eval FAILED: ${failed} of ${rows.length} cases failed in a hard family`
  )
  return out.join("\n")
}
