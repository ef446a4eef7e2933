/**
 * What every conversation-memory dataset the benches read comes down to: turns said by a speaker
 * in a thread of a conversation, and questions whose evidence names some of those turns.
 *
 * A loader (`locomo.ts`, `beam.ts`) reads a public dataset from where the user put it (never from
 * this repository: the data sets' licences ask for loaders, not copies) into this shape; a bench
 * writes the turns as a user would ({@link records}) and scores what a search returns against the
 * evidence ({@link recallAt}).
 */
import { MemoryLimits } from "@engram/core"
import { prng } from "../prng.js"

/** One turn of a conversation. `id` is unique across the dataset. */
export interface Turn {
  readonly id: string
  readonly speaker: string
  readonly text: string
  /** The conversation the turn belongs to: one store scope per conversation. */
  readonly scope: string
  /** The session (thread) the turn was said in, and its place in it. */
  readonly thread: string
  readonly turn: number
}

/** One question, asked within its conversation's scope; `evidence` are turn ids. */
export interface Question {
  readonly id: string
  readonly text: string
  readonly scope: string
  readonly evidence: ReadonlyArray<string>
  /** The dataset's own question category (LoCoMo's 1-4, BEAM's memory ability). */
  readonly category: string
}

/** A loaded dataset. */
export interface Dataset {
  /** Short name used in tables and options: `locomo`, `beam-128k`, `beam-500k`. */
  readonly name: string
  /**
   * The source the dataset came from. Datasets of one family share a generator and question
   * writers, so leave-one-out holds a whole family out, never one of its members alone.
   */
  readonly family: string
  /** Where it comes from and under which licence, for the bench's output. */
  readonly source: string
  readonly turns: ReadonlyArray<Turn>
  readonly questions: ReadonlyArray<Question>
}

/**
 * How a user would store the turns: one record per turn, `"<speaker>: <text>"`, with or without
 * its place in the conversation (`position`, which neighbour scoring reads).
 */
export type Variant = "positions" | "no-positions"

/** The two ways every dataset is stored. */
export const VARIANTS: ReadonlyArray<Variant> = ["positions", "no-positions"]

/**
 * The text a turn is stored as. A store refuses a record over `MemoryLimits.maxContentChars`
 * (32,000 characters); a user's application would cut such a message to fit, and so does this —
 * the same text for every engine (a handful of BEAM's messages, pasted files, run to 350,000).
 */
export const contentOf = (turn: Turn): string =>
  `${turn.speaker}: ${turn.text}`.slice(0, MemoryLimits.defaults.maxContentChars)

/** The memory-write inputs of a dataset's turns, stored the `variant` way. */
export const records = (dataset: Dataset, variant: Variant) =>
  dataset.turns.map((turn) => ({
    id: turn.id,
    content: contentOf(turn),
    scope: turn.scope,
    kind: "episode" as const,
    sourceType: "conversation" as const,
    ...(variant === "positions" ? { position: { thread: turn.thread, turn: turn.turn } } : {})
  }))

/**
 * Evidence recall at `k`: the share of each question's evidence turns among the first `k` ids it
 * was answered with, averaged over questions.
 */
export const recallAt = (
  questions: ReadonlyArray<Question>,
  ranked: ReadonlyArray<ReadonlyArray<string>>,
  k: number
): number => {
  if (questions.length === 0) return Number.NaN
  let sum = 0
  questions.forEach((q, i) => {
    const top = new Set(ranked[i]!.slice(0, k))
    sum += q.evidence.filter((id) => top.has(id)).length / q.evidence.length
  })
  return sum / questions.length
}

/** Approximate size of a dataset's conversations in tokens (4 characters a token), for the bench's output. */
export const meanConversationTokens = (dataset: Dataset): number => {
  const chars = new Map<string, number>()
  for (const turn of dataset.turns) chars.set(turn.scope, (chars.get(turn.scope) ?? 0) + contentOf(turn).length)
  const values = [...chars.values()]
  return values.reduce((a, b) => a + b, 0) / Math.max(1, values.length) / 4
}

/**
 * A seeded subsample of `questions` (all of them when `size` is undefined or not smaller): the
 * same seed picks the same questions on every machine.
 */
export const sample = <Q>(questions: ReadonlyArray<Q>, size: number | undefined, seed: number): ReadonlyArray<Q> => {
  if (size === undefined || size >= questions.length) return questions
  const next = prng(seed)
  const indices = questions.map((_, i) => i)
  for (let i = indices.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[indices[i], indices[j]] = [indices[j]!, indices[i]!]
  }
  return indices.slice(0, size).sort((x, y) => x - y).map((i) => questions[i]!)
}
