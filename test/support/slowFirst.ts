/**
 * The order test files start in: vitest's own (files that failed last time, then the longest
 * last time, or — on a clean clone, with no record of a previous run — the largest), except that
 * the files that take a minute or more start first. On a clean clone they are not the largest, and
 * one of them starting last would leave a single worker running it alone for a minute or two.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node"

/** The slowest files, slowest first (measured on a quiet 2-core machine; decision 0195). */
export const SLOWEST: ReadonlyArray<string> = [
  "test/packaging.test.ts",
  "packages/cli/test/eval.test.ts",
  "test/routingEval.test.ts",
  "test/reliability/killLoop.test.ts",
  "packages/store-pg/test/PgConformance.test.ts",
  "packages/cli/test/embed.test.ts"
]

const rank = (file: TestSpecification): number => {
  const index = SLOWEST.findIndex((path) => file.moduleId.endsWith(`/${path}`))
  return index === -1 ? SLOWEST.length : index
}

/** vitest's sequencer with {@link SLOWEST} moved to the front (a stable sort keeps the rest as vitest ordered them). */
export class SlowFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b))
  }
}
