/**
 * The values `Extraction` and its bodies share: the schemas of the model's answer, the proposal
 * tag, the default settings and the metrics. They live here, not in the public module (which
 * re-exports them), so no body imports a value from `Extraction.ts` (that would be a cycle).
 */
import { MemoryRecord } from "@engram/core"
import * as Duration from "effect/Duration"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"
import * as MemoryTools from "../MemoryTools.js"

/**
 * One memory the model proposes: its content, kind and label (as `memory_save` takes them), the
 * turn numbers it rests on, and — when it corrects a memory it was shown — that memory's id.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Candidate = Schema.Struct({
  content: MemoryTools.SaveParameters.content,
  kind: MemoryTools.SaveParameters.kind,
  label: MemoryTools.SaveParameters.label,
  turns: Schema.Array(Schema.Int.pipe(Schema.positive())).annotations({
    description: "The numbers of the turns this memory rests on."
  }),
  supersedes: Schema.optional(MemoryRecord.MemoryId).annotations({
    description: "When this memory corrects one of the memories you were shown: that memory's id."
  })
}).annotations({ identifier: "ExtractedMemory" })
/** @since 0.1.0 @category schemas */
export type Candidate = typeof Candidate.Type

/**
 * What the extraction call answers: the memories worth keeping (none is a good answer).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Candidates = Schema.Struct({ memories: Schema.Array(Candidate) }).annotations({
  identifier: "ExtractedMemories"
})
/** @since 0.1.0 @category schemas */
export type Candidates = typeof Candidates.Type

/**
 * The tag a supersede proposal carries: `supersede-proposal:<holder id>`.
 *
 * @since 0.1.0
 * @category provenance
 */
export const proposalTag = (holderId: string): string => `supersede-proposal:${holderId}`

/**
 * The memory a record proposes to supersede, read from its tag; `undefined` when it is no
 * proposal.
 *
 * @since 0.1.0
 * @category provenance
 */
export const proposedHolder = (record: { readonly tags: ReadonlyArray<string> }): string | undefined =>
  record.tags.find((tag) => tag.startsWith("supersede-proposal:"))?.slice("supersede-proposal:".length)

/**
 * The default settings.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = {
  maxTurns: 8,
  maxTurnChars: 2000,
  shownMemories: 30,
  tokenBudget: 20_000,
  nearDuplicateThreshold: 0.9,
  claimLease: Duration.minutes(10)
} as const

/**
 * Counts extraction runs that called the model, extracted memories (saved or proposed),
 * duplicates caught (`corroborated`), and tokens spent.
 *
 * @since 0.1.0
 * @category metrics
 */
export const metrics = {
  runs: Metric.counter("engram_extraction_runs", { description: "Extraction runs that called the model" }),
  extracted: Metric.counter("engram_extraction_memories", { description: "Memories extraction wrote" }),
  corroborated: Metric.counter("engram_extraction_corroborated", {
    description: "Extracted candidates that an existing memory already held"
  }),
  tokens: Metric.counter("engram_extraction_tokens", { description: "Tokens spent on extraction calls" })
}
