/**
 * Leave-one-dataset-out choice of the keyword ranking's parameters (decision 0150): every setting of
 * a grid is replayed on every dataset ({@link evaluateGrid}); for each dataset, the setting is
 * chosen on the *other* datasets only ({@link chooseFor}), and that dataset's figure is then
 * measured with it — so no reported figure comes from data its parameters were chosen on.
 *
 * The choice is robust rather than average: the setting whose worst margin over raw FTS5 (R@10,
 * over every training dataset stored both ways) is largest, the mean margin breaking ties. The
 * issue asks for a ranking that holds everywhere, and a mean lets one dataset that likes a setting
 * buy a loss on another.
 *
 * With term frequency 1, BM25's `k1` and `b` rank alike whenever `(1 + k1 (1 − b)) / (k1 b)` — the
 * record length, as a multiple of the average, at which a record's score halves — is the same, so
 * the grid varies that one quantity ({@link HALVING}), with `b` at BM25's customary 0.75 (and `b = 0`,
 * no length normalisation, as one more point). Each ranked token weighs `idf^power` (decision 0153):
 * the power is chosen with the rest.
 */
import { Bm25, SearchPlan } from "@engram/core"
import type { Dataset, Variant } from "./datasets/Dataset.js"
import { recallAt, VARIANTS } from "./datasets/Dataset.js"
import * as Replay from "./rankingReplay.js"

/** The halving lengths (multiples of the average record length) the grid tries; `Infinity` is `b = 0`. */
export const HALVING = [Infinity, 4, 2, 1, 0.5] as const
export const WINDOWS = [0, 1, 2] as const
export const WEIGHTS = [0.1, 0.2, 0.5] as const
/**
 * The pruning shares. Decision 0150's grid tried 3, 5, 10 and 20%: 10% ranked best on every dataset
 * and fold, so since decision 0153 (which adds the IDF's power) the grid holds it fixed: 105
 * settings, 210 with the function-word rule (decision 0209) — about 20 minutes of replay on this
 * project's shared 2-core machine under load.
 */
export const SHARES = [0.1] as const
/** The powers a ranked token's IDF is raised to (`SearchPlan.PlannerOptions.idfPower`, decision 0153). */
export const POWERS = [1, 2, 3] as const
/** Whether the query's function words are pruned to the tail (`PlannerOptions.pruneFunctionWords`, decision 0209). */
export const FUNCTION_WORDS = [false, true] as const

/** `k1` and `b` for a halving length `h`: `b = 0.75`, `k1 = 1 / (0.75 h − 0.25)`; `b = 0` for `Infinity`. */
export const bm25For = (halving: number): { readonly k1: number; readonly b: number } =>
  Number.isFinite(halving) ? { k1: 1 / (0.75 * halving - 0.25), b: 0.75 } : { k1: 1.2, b: 0 }

/** One point of the grid. */
export interface Setting {
  readonly halving: number
  readonly bm25: Bm25.Parameters
  readonly share: number
  readonly power: number
  readonly pruneFunctionWords: boolean
}

export const describeSetting = (s: Setting): string =>
  `k1 ${s.bm25.k1.toFixed(3)}, b ${s.bm25.b}, window ${s.bm25.neighbourWindow}, weight ${s.bm25.neighbourWeight}, ` +
  `prune > ${100 * s.share}%, idf^${s.power}, function words ${s.pruneFunctionWords ? "pruned" : "ranked"}`

/** Every setting of the grid. */
export const grid = (): Array<Setting> =>
  HALVING.flatMap((halving) =>
    WINDOWS.flatMap((neighbourWindow) =>
      (neighbourWindow === 0 ? [0] : WEIGHTS).flatMap((neighbourWeight) =>
        SHARES.flatMap((share) =>
          POWERS.flatMap((power) =>
            FUNCTION_WORDS.map((pruneFunctionWords) => ({
              halving,
              bm25: { ...bm25For(halving), neighbourWindow, neighbourWeight },
              share,
              power,
              pruneFunctionWords
            }))
          )
        )
      )
    )
  )

/** The planner options of a setting: the defaults but for the pruning share, the IDF's power and the function words. */
export const plannerFor = (
  setting: Pick<Setting, "share" | "power" | "pruneFunctionWords">
): SearchPlan.PlannerOptions => ({
  ...SearchPlan.defaultOptions,
  maxDocumentShare: setting.share,
  idfPower: setting.power,
  pruneFunctionWords: setting.pruneFunctionWords
})

/** R@10 of every setting on every dataset and variant: `scores[setting][dataset][variant]`. */
export interface GridScores {
  readonly settings: ReadonlyArray<Setting>
  readonly datasets: ReadonlyArray<string>
  readonly scores: ReadonlyArray<ReadonlyArray<Readonly<Record<Variant, number>>>>
}

/** Replays every grid setting on every prepared dataset. */
export const evaluateGrid = (prepared: ReadonlyArray<Replay.Prepared>, settings = grid()): GridScores => {
  // Matches depend on the planner options only: collected once per share, power and function-word rule.
  const collected = prepared.map(() => new Map<string, ReadonlyArray<Replay.Matches>>())
  const scores = settings.map((setting) =>
    prepared.map((p, i) => {
      const key = `${setting.share}/${setting.power}/${setting.pruneFunctionWords}`
      let matches = collected[i]!.get(key)
      if (matches === undefined) {
        matches = Replay.collect(p, plannerFor(setting), 10)
        collected[i]!.set(key, matches)
      }
      return Object.fromEntries(
        VARIANTS.map((variant) => [
          variant,
          recallAt(p.dataset.questions, Replay.rankAll(p, matches, variant, setting.bm25, 10), 10)
        ])
      ) as Record<Variant, number>
    })
  )
  return { settings, datasets: prepared.map((p) => p.dataset.name), scores }
}

/**
 * The setting chosen on the datasets named `training`: the largest worst margin over `floor` (each
 * dataset's raw FTS5 R@10), both variants counted, the mean margin breaking ties.
 */
export const choose = (
  grid: GridScores,
  training: ReadonlyArray<string>,
  floor: Readonly<Record<string, number>>
): { readonly setting: Setting; readonly worst: number; readonly mean: number } => {
  const columns = grid.datasets.flatMap((name, i) => (training.includes(name) ? [i] : []))
  if (columns.length === 0) throw new Error(`no training dataset among ${grid.datasets.join(", ")}`)
  let best: { setting: Setting; worst: number; mean: number } | undefined
  grid.settings.forEach((setting, s) => {
    const margins = columns.flatMap((i) => VARIANTS.map((v) => grid.scores[s]![i]![v] - floor[grid.datasets[i]!]!))
    const worst = Math.min(...margins)
    const mean = margins.reduce((a, b) => a + b, 0) / margins.length
    if (best === undefined || worst > best.worst + 1e-9 || (Math.abs(worst - best.worst) <= 1e-9 && mean > best.mean)) {
      best = { setting, worst, mean }
    }
  })
  return best!
}

/** For each dataset, the setting chosen on the others. */
export const leaveOneOut = (
  grid: GridScores,
  datasets: ReadonlyArray<Dataset>,
  floor: Readonly<Record<string, number>>
) =>
  datasets.map((held) => ({
    dataset: held.name,
    trainedOn: datasets.filter((d) => d.name !== held.name).map((d) => d.name),
    chosen: choose(grid, datasets.filter((d) => d.name !== held.name).map((d) => d.name), floor)
  }))
