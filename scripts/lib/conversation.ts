/**
 * Deterministic conversational records and the questions people ask about them, for benchmarks.
 *
 * Records are chat turns ("Maya: oh yeah we took the ferry to …"): mostly function words, with
 * content words drawn Zipf-like from a vocabulary of common words and a long tail of rarer ones.
 * Questions are built about one record (its evidence): a template full of stopwords ("what did …
 * say about the …") around that record's speaker and two or three of its content words — about
 * ten distinct tokens, like an operator's message.
 */
import type { MemoryRecord } from "@engram/core"
import { prng } from "./prng.js"

const FUNCTION_WORDS = (
  "i you the to and a it that of is in was my me we for so just have with on but be what this do not are like " +
  "about at he she they know really yeah oh did had can how all there get if one out up when would your been go " +
  "think well good time them were some from more going because then want got her his him see much said very us " +
  "last week told say remember feel after before with our by an or as"
).split(" ")

const COMMON_WORDS = (
  "ferry lake trip dinner mother sister brother kids school work job boss meeting project deadline coffee lunch " +
  "weekend concert guitar painting pottery class hike camping beach mountain garden dog cat puppy car bike train " +
  "flight hotel museum book movie game team practice race marathon doctor hospital birthday party wedding gift " +
  "recipe cake bread market shop rent apartment house move city village friend neighbor teacher student exam " +
  "interview promotion salary budget vacation island river forest snow rain summer winter spring autumn festival " +
  "parade volunteer shelter charity church choir dance yoga gym coach tournament trophy photo camera album song " +
  "band piano violin novel poem essay letter phone laptop startup bakery restaurant menu chef garage boat"
).split(" ")

/** Pseudo-words for the long tail: syllable strings, deterministic. */
const TAIL = (() => {
  const random = prng(7)
  const syllables = ["ka", "lo", "mi", "ren", "tor", "vel", "shi", "an", "qu", "dro", "pel", "zu", "ith", "mar", "os"]
  const words = new Set<string>()
  while (words.size < 20_000) {
    const length = 2 + Math.floor(random() * 3)
    let word = ""
    for (let i = 0; i < length; i++) word += syllables[Math.floor(random() * syllables.length)]
    words.add(word)
  }
  return [...words]
})()

const CONTENT = [...COMMON_WORDS, ...TAIL]

const NAMES = (() => {
  const random = prng(11)
  const first = ["Ma", "Jo", "Ev", "Ca", "Na", "Li", "Ro", "Sa", "Te", "Au", "De", "Fi", "Gu", "Ha", "Ir"]
  const second = ["ya", "lene", "an", "lvin", "te", "ria", "dney", "m", "resa", "drey", "nis", "ona", "s", "nna", "is"]
  const names = new Set<string>()
  while (names.size < 200) {
    names.add(first[Math.floor(random() * first.length)]! + second[Math.floor(random() * second.length)]!)
  }
  return [...names]
})()

/** A Zipf-like pick: rank r drawn with weight ~ 1/r. */
const zipf = (random: () => number, size: number) =>
  Math.min(size - 1, Math.floor(Math.exp(random() * Math.log(size + 1)) - 1))

/** A record's speaker and content words: what a question about it can name. */
export interface Turn {
  readonly input: MemoryRecord.MemoryWriteInput & { readonly id: string; readonly scope: string }
  readonly speaker: string
  readonly words: ReadonlyArray<string>
}

const scopeOf = (random: () => number) => {
  const roll = random()
  return roll < 0.5
    ? "global"
    : roll < 0.85
    ? `project:p${Math.floor(random() * 10)}`
    : `session:s${Math.floor(random() * 50)}`
}

/**
 * How records spread over scopes: `mixed` (half global, projects p0–p9, sessions s0–s49) or
 * `tenants` (issue #39's deployment: 10% global, the rest one project scope per thousand records,
 * `project:pK` holding records K·1000 … K·1000 + 999).
 */
export type ScopeLayout = "mixed" | "tenants"

/**
 * Turn `i`, drawn from `random` (which must have drawn turns 0 … i − 1). With `build` false the same
 * draws are made and no text is built: a cheap way past turns a caller does not want.
 */
const drawTurn = (random: () => number, i: number, layout: ScopeLayout, build: boolean): Turn => {
  const speaker = NAMES[zipf(random, NAMES.length)]!
  const length = 8 + Math.floor(random() * 32)
  const words: Array<string> = []
  const parts: Array<string> = []
  for (let w = 0; w < length; w++) {
    if (random() < 0.6) {
      const word = FUNCTION_WORDS[zipf(random, FUNCTION_WORDS.length)]!
      if (build) parts.push(word)
    } else {
      const word = CONTENT[zipf(random, CONTENT.length)]!
      if (build) {
        words.push(word)
        parts.push(word)
      }
    }
  }
  return {
    speaker,
    words,
    input: {
      id: `turn-${String(i).padStart(7, "0")}`,
      content: build ? `${speaker}: ${parts.join(" ")}.` : "",
      kind: "episode",
      sourceType: "conversation",
      scope: layout === "mixed" ? scopeOf(random) : random() < 0.1 ? "global" : `project:p${Math.floor(i / 1000)}`,
      tags: []
    }
  }
}

/** `count` chat turns from a fixed seed. */
export const generateTurns = (count: number, seed: number, layout: ScopeLayout = "mixed"): Array<Turn> => {
  const random = prng(seed)
  return Array.from({ length: count }, (_, i) => drawTurn(random, i, layout, true))
}

/** Standing instructions in a bench store: a real store has a handful, not 5% of everything. */
export const ALWAYS_ON = 20

/**
 * The delivery policy of each turn in order: the first {@link ALWAYS_ON} `global` ones delivered
 * always (the projection bench's store: `project()` reads them every turn), the rest retrieved.
 */
const alwaysOnPolicy = () => {
  let globals = 0
  return (turn: Turn): MemoryRecord.DeliveryPolicy => {
    if (turn.input.scope !== "global") return "retrieved"
    globals++
    return globals <= ALWAYS_ON ? "always" : "retrieved"
  }
}

/** The turns' inputs with their delivery policies ({@link alwaysOnPolicy}). */
export const withAlwaysOn = (turns: ReadonlyArray<Turn>): Array<MemoryRecord.MemoryWriteInput> => {
  const policy = alwaysOnPolicy()
  return turns.map((turn) => ({ ...turn.input, deliveryPolicy: policy(turn) }))
}

/**
 * `withAlwaysOn(generateTurns(to, seed, layout)).slice(from)`, one input at a time, without
 * building the turns before `from` nor holding the ones after: a slice of a 10M-record store.
 */
export function* inputsBetween(
  from: number,
  to: number,
  seed: number,
  layout: ScopeLayout
): Generator<MemoryRecord.MemoryWriteInput> {
  const random = prng(seed)
  const policy = alwaysOnPolicy()
  for (let i = 0; i < to; i++) {
    const turn = drawTurn(random, i, layout, i >= from)
    const deliveryPolicy = policy(turn)
    if (i >= from) yield { ...turn.input, deliveryPolicy }
  }
}

const TEMPLATES: ReadonlyArray<(name: string, w: ReadonlyArray<string>) => string> = [
  (n, w) => `What did ${n} say about the ${w[0]} and the ${w[1]}?`,
  (n, w) => `When did ${n} go to the ${w[0]} with the ${w[1]}?`,
  (n, w) => `Do you remember what ${n} told me about ${w[0]} ${w[1]} last week?`,
  (n, w) => `How did ${n} feel about the ${w[0]} after the ${w[1]} ${w[2] ?? ""}?`,
  (n, w) => `Why was ${n} so worried about ${w[0]} and ${w[1]} before?`,
  (n, w) => `Where did ${n} and I talk about the ${w[0]} ${w[2] ?? ""} and ${w[1]}?`
]

/** A question with the id of the record that answers it. */
export interface Question {
  readonly text: string
  readonly evidence: string
}

/**
 * `count` questions, each about a record in one of `scopes` (the scope filter the runtime passes).
 */
export const generateQuestions = (
  turns: ReadonlyArray<Turn>,
  count: number,
  seed: number,
  scopes: ReadonlyArray<string>
): Array<Question> => {
  const random = prng(seed)
  const candidates = turns.filter((t) => scopes.includes(t.input.scope) && t.words.length >= 3)
  return Array.from({ length: count }, (_, i) => {
    const turn = candidates[Math.floor(random() * candidates.length)]!
    const picked = [...turn.words].sort(() => random() - 0.5).slice(0, 3)
    return { text: TEMPLATES[i % TEMPLATES.length]!(turn.speaker, picked), evidence: turn.input.id }
  })
}

/** Short queries: one to three words, a third frequent, a third mid-range, a third rare. */
export const generateShortQueries = (count: number, seed: number): Array<string> => {
  const random = prng(seed)
  const vocabulary = [...FUNCTION_WORDS, ...CONTENT]
  return Array.from({ length: count }, (_, i) => {
    const words = 1 + Math.floor(random() * 3)
    const band = i % 3
    return Array.from({ length: words }, () => {
      const rank = band === 0
        ? Math.floor(random() * 100)
        : band === 1
        ? 100 + Math.floor(random() * 900)
        : 1_000 + Math.floor(random() * (vocabulary.length - 1_000))
      return vocabulary[rank]!
    }).join(" ")
  })
}
