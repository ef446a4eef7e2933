/**
 * A store poisoned the three ways a memory-poisoning attack writes (issue #37): straight through
 * the store (an import, an operator's write — as plain notes, always-on records, session summaries
 * for the prior-session digest, and a value promoted into the Background's address), through the
 * model's `memory_save`, and through extraction (a scripted extractor proposing what the user's
 * turns "asked to remember"). Every attack is a payload of Engram's corpus that the screen flags,
 * so each record is held: pending and flagged.
 *
 * `needles` are what must never appear in any model-visible byte: each attack's text as the
 * sanitiser would render it, and its first thirty characters (a truncated leak is a leak).
 */
import {
  ContextProjection,
  InstructionScreen,
  type MemoryRecord,
  MemoryStore,
  PromotionStore,
  RoutingPresets,
  SessionStore,
  TextSafety
} from "@engram/core"
import { Extraction, MemoryTools, Promotion } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { attacks as corpus } from "../../packages/harness/src/internal/poisoningCorpus.js"

/** Twenty-five attacks the screen flags, every style of the corpus among them. */
export const attacks: ReadonlyArray<string> = (() => {
  const flagged = corpus.filter((attack) => InstructionScreen.screen(attack.text).flagged)
  const styles = [...new Set(flagged.map((attack) => attack.style))]
  const picked: Array<string> = []
  for (let round = 0; picked.length < 25; round++) {
    for (const style of styles) {
      const ofStyle = flagged.filter((attack) => attack.style === style)
      if (round < ofStyle.length && picked.length < 25) picked.push(ofStyle[round]!.text)
    }
  }
  return picked
})()

/**
 * An attack short enough to be a tag (at most `MemoryRecord.TAG_MAX_CHARS`), saved by the model as
 * the tag of a memory whose content is benign: the record is held for its tag.
 */
export const tagAttack: string =
  corpus.find((attack) =>
    attack.text.length <= 64 && !attacks.includes(attack.text) && InstructionScreen.screen(attack.text).flagged
  )!.text

/** The benign content of the record held for its tag. */
export const taggedContent = "The user's pottery class is on Thursdays"

/** A benign conversation turn whose next turn in the thread is an attack: a recall hit with a held neighbour. */
export const neighbourOfAttack = "Caroline said the weather in Lisbon was lovely all week"

/** What no request, tool result or MCP message may hold. */
export const needles: ReadonlyArray<string> = [...attacks, tagAttack].flatMap((text) => {
  const safe = TextSafety.safeLine(text).trim()
  return [safe, safe.slice(0, 30)]
})

/** The needles `text` holds (none, when nothing leaked). */
export const leaks = (text: string): ReadonlyArray<string> => needles.filter((needle) => text.includes(needle))

/** Invisible characters a shown record must not carry into a model's bytes. */
export const invisible = /[\u200B-\u200F\u2060-\u2064\uFEFF\u{E0000}-\u{E007F}]/u

/** A benign memory with a zero-width space in it: shown, and shown without it. */
export const benign = "The user's ca\u200Bt is called Tom"

export const memoryConfig = (scope: MemoryRecord.Scope) => ({
  scope,
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground
})

/** The marker a poisoning session's user turn carries for attack `i`. */
const marker = (i: number) => `Remember: item ${i}`

/**
 * The scripted extractor of the poisoning sessions: each "Remember: item i" turn becomes attack i,
 * verbatim. Any other extraction prompt gets an empty answer.
 */
export const poisoningExtractor = (request: ScriptedModel.ScriptedRequest): ScriptedModel.Reply => {
  const text = ScriptedModel.userTexts(request).join("\n")
  const memories = [...text.matchAll(/Turn (\d+):\nuser: Remember: item (\d+)/g)].map((m) => ({
    content: attacks[Number(m[2])]!,
    kind: "note",
    turns: [Number(m[1])]
  }))
  return [ScriptedModel.text(JSON.stringify({ memories }))]
}

/** True for an extraction request (its prompt opens with the extraction instructions). */
export const isExtraction = (request: ScriptedModel.ScriptedRequest): boolean =>
  ScriptedModel.userTexts(request).some((text) => text.startsWith("You read a conversation"))

/**
 * Writes the attacks into `scope` the three ways: the first nine through the store (three
 * always-on, three as summaries of earlier sessions, one labelled `name` and one unlabelled profile,
 * both promoted,
 * and one as a conversation turn right after the benign {@link neighbourOfAttack}), the next eight
 * through `memory_save` (and {@link tagAttack} as a tag of benign content), the last eight through
 * an extraction run. Needs a `LanguageModel` answering extraction prompts with {@link poisoningExtractor}.
 */
export const poison = (scope: MemoryRecord.Scope) =>
  Effect.gen(function*() {
    const memory = memoryConfig(scope)
    const store = yield* MemoryStore.MemoryStore
    const direct = yield* store.write([
      ...attacks.slice(0, 3).map((content) => ({
        content,
        kind: "fact" as const,
        scope,
        deliveryPolicy: "always" as const,
        sourceType: "operator" as const
      })),
      ...attacks.slice(3, 6).map((content, i) => ContextProjection.summaryInput(`s-earlier-${i}`, content, { scope })),
      { content: attacks[6]!, kind: "profile" as const, label: "name", scope, sourceType: "ingest" as const },
      // A profile without a label: its address is its content's key, so the same words saved again are a duplicate.
      { content: attacks[8]!, kind: "profile" as const, scope, sourceType: "ingest" as const },
      ...[neighbourOfAttack, attacks[7]!].map((content, turn) => ({
        content,
        kind: "episode" as const,
        scope,
        sourceType: "conversation" as const,
        position: { thread: "t-poisoned", turn }
      })),
      {
        content: benign,
        kind: "fact" as const,
        scope,
        deliveryPolicy: "always" as const,
        sourceType: "operator" as const
      }
    ])
    yield* Promotion.promoteNew(direct, memory)

    const tools = yield* MemoryTools.make(memory)
    for (const [i, content] of attacks.slice(9, 17).entries()) {
      yield* tools.memory_save({ kind: "note", content, ...(i === 0 ? { label: "time zone" } : {}) })
    }
    yield* tools.memory_save({ kind: "note", content: taggedContent, tags: ["pottery", tagAttack] })

    const extraction = yield* Extraction.make({ maxTurns: 20, nearDuplicates: false })
    const at = yield* DateTime.now
    const messages = attacks.slice(17).map((_, i) => new SessionStore.OperatorMessage({ text: marker(17 + i), at }))
    yield* extraction.run({ sessionId: "s-poisoning", memory, messages })

    const all = (yield* store.list({ scopes: [scope], limit: 100 })).records
    const held = all.filter((record) => attacks.includes(record.content))
    if (held.length !== attacks.length || held.some((record) => record.reviewState !== "pending" || !record.flagged)) {
      return yield* Effect.die(`expected ${attacks.length} held attack records, found ${held.length}`)
    }
    const tagged = all.find((record) => record.content === taggedContent)
    if (tagged === undefined || !tagged.flagged) return yield* Effect.die("expected the tagged record to be held")
    return held
  })

/** Every store and service `poison` needs besides the scripted model. */
export type PoisonContext =
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | SessionStore.SessionStore
