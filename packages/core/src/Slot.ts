/**
 * Slots: the subject-and-attribute a memory states a value for — the user's name, a project's
 * deploy day, the team's standup time — whatever its label, kind or wording. Two live memories in
 * one slot with different values are a correction waiting to happen; two with the same value are a
 * restatement. The save gate, extraction and review all ask this module, so "the same slot" means
 * one thing everywhere (decision 0170).
 *
 * A slot is identified, first match wins:
 *
 * 1. `statement` — the content states a single-valued key the spec declares ("My name is
 *    Douglas", `Routing.statedKeyOf`). What the content says beats what the label says.
 * 2. `canonical` / `alias` — the label folds to a key the spec declares (`Routing.declaredKeyOf`).
 * 3. `pattern` — the content's first clause has the shape *subject attribute* + copula or change
 *    verb + value: "Atlas's deploy day is Tuesday", "Our standup moved to 10am", "The deploy day
 *    for Atlas is Thursday". The subject phrase, without determiners and without the speaker's
 *    own possessive ("my", "our", "the user's"), is the slot.
 * 4. `label` — the content opens with its own label's words ("Standup: 9am" labelled `standup`).
 *
 * Otherwise the memory states no slot (a preference, an event, a note) and is never a correction
 * of anything by this module. Pure.
 *
 * @since 0.1.0
 */
import { addressTokens } from "./internal/addressTokens.js"
import * as Routing from "./Routing.js"

/**
 * Which rule identified a slot.
 *
 * @since 0.1.0
 * @category models
 */
export type SlotSource = "statement" | "canonical" | "alias" | "pattern" | "label"

/**
 * A slot: `key` compares slots (`section/key` for a declared key, `~words` otherwise); `name` is
 * the key a person reads (`name`, `deploy_day_atlas`); `source` says which rule found it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Slot {
  readonly key: string
  readonly name: string
  readonly source: SlotSource
}

/** Words that open a correction or a restatement and say nothing about the slot. */
const discourse =
  /^(?:(?:actually|correction|update|updated|note|fyi|ok|okay|oh|so|well|also|btw|by the way|heads up|just so you know|reminder|remember|as i said|like i said|as mentioned|to be clear|yes|yeah|no|sorry|again|now)\b[\s,:;!.\u2013\u2014-]*)+/u

/** Copulas and change verbs: what sits between an attribute and its value. */
const verb =
  /^(.+?)\s+(?:is|are|was|were|will be|has been|have been|moved|moves|has moved|changed|has changed|switched|has switched|became|becomes|falls|happens|takes place|starts|begins)(?=$|[^\p{L}\p{N}])/u

/**
 * Dropped from a subject phrase: articles, the speaker's own possessives, "current"-like words
 * and how often a thing recurs (a daily standup is the standup).
 */
const dropped = new Set([
  "the",
  "a",
  "an",
  "our",
  "my",
  "your",
  "this",
  "these",
  "those",
  "current",
  "new",
  "usual",
  "regular",
  "now",
  "user",
  "users",
  "s",
  "team",
  "daily",
  "weekly",
  "monthly",
  "yearly",
  "annual"
])

/** A subject made only of these names nobody in particular: "it is", "there was", "he is". */
const pronouns = new Set([
  "i",
  "me",
  "we",
  "us",
  "it",
  "there",
  "he",
  "she",
  "they",
  "him",
  "them",
  "that",
  "what",
  "which",
  "who",
  "here",
  "today",
  "tomorrow",
  "yesterday",
  "one",
  "everything",
  "something",
  "nothing"
])

const MAX_SUBJECT_WORDS = 6

/** The first clause of the content, folded, with discourse openers removed. */
const firstClause = (content: string): string => {
  const folded = content
    .normalize("NFKD")
    .replace(/[^\P{M}\u3099\u309A]+/gu, "")
    .toLowerCase()
    .normalize("NFC")
    .replace(/\b([ap])\.m\./gu, "$1m")
  const clause = folded.split(/[;!?\n]|\.(?=\s|$)/u)[0] ?? ""
  return clause.trim().replace(discourse, "").trim()
}

/** Subject words as a slot: "X of/for Y" read as "Y X", determiners and self-possessives dropped. */
const subjectWords = (subject: string): ReadonlyArray<string> | undefined => {
  const words = addressTokens(subject)
  const split = words.findIndex((word) => word === "for" || word === "of")
  const ordered = split > 0 ? [...words.slice(split + 1), ...words.slice(0, split)] : words
  const kept = ordered.filter((word) => !dropped.has(word))
  if (kept.length === 0 || kept.length > MAX_SUBJECT_WORDS) return undefined
  if (kept.every((word) => pronouns.has(word))) return undefined
  // A subject that is only a person reference ("the user is a vegetarian") has no attribute.
  if (ordered.length === 1 && (ordered[0] === "user" || ordered[0] === "users")) return undefined
  return kept
}

const patternSlot = (content: string): Slot | undefined => {
  const match = verb.exec(firstClause(content))
  if (match === null) return undefined
  const words = subjectWords(match[1]!)
  return words === undefined ? undefined : { key: `~${words.join("_")}`, name: words.join("_"), source: "pattern" }
}

const labelSlot = (label: string | undefined, content: string): Slot | undefined => {
  if (label === undefined) return undefined
  const words = addressTokens(label).filter((word) => !dropped.has(word))
  if (words.length === 0 || words.length > MAX_SUBJECT_WORDS) return undefined
  const opening = addressTokens(firstClause(content)).filter((word) => !dropped.has(word))
  if (opening.length <= words.length || !words.every((word, i) => opening[i] === word)) return undefined
  return { key: `~${words.join("_")}`, name: words.join("_"), source: "label" }
}

/**
 * The slot a record states a value for under `spec`, or `undefined` when it states none (see the
 * module description for the order of the rules). Pure.
 *
 * @since 0.1.0
 * @category slots
 */
export const slotOf = (
  spec: Pick<Routing.MemoryRoutingSpec, "keys">,
  record: { readonly label?: string | undefined; readonly content: string }
): Slot | undefined => {
  const stated = Routing.statedKeyOf(spec, record.content)
  if (stated !== undefined) return { key: `${stated.section}/${stated.key}`, name: stated.key, source: "statement" }
  const declared = record.label === undefined ? undefined : Routing.declaredKeyOf(spec, record.label)
  if (declared !== undefined) {
    return { key: `${declared.section}/${declared.key}`, name: declared.key, source: declared.keySource }
  }
  return patternSlot(record.content) ?? labelSlot(record.label, record.content)
}

/**
 * True when two records are in the same slot under `spec` (both state one, and it is the same).
 *
 * @since 0.1.0
 * @category slots
 */
export const sameSlot = (
  spec: Pick<Routing.MemoryRoutingSpec, "keys">,
  a: { readonly label?: string | undefined; readonly content: string },
  b: { readonly label?: string | undefined; readonly content: string }
): boolean => {
  const x = slotOf(spec, a)
  return x !== undefined && x.key === slotOf(spec, b)?.key
}

/** Capitalised words that name nothing: pronouns, openers, the user. */
const unremarkable = new Set([
  "i",
  "i'm",
  "im",
  "i've",
  "my",
  "we",
  "our",
  "the",
  "a",
  "an",
  "user",
  "users",
  "it",
  "this",
  "that",
  "he",
  "she",
  "they",
  "his",
  "her",
  "their",
  "yes",
  "no",
  "not",
  "and",
  "but",
  "also",
  "actually",
  "just",
  "still",
  "now",
  "like",
  "as",
  "so",
  "ok",
  "okay",
  "note",
  "update",
  "correction",
  "again"
])

const wordPattern = /[\p{L}\p{N}][\p{L}\p{N}'\u2019:./-]*/gu

/**
 * The values a text states, as restatements are compared: every word with a digit (times folded:
 * "9 am", "9am" and "9:00 am" are one value) and every capitalised word that does not open a
 * sentence and is not a pronoun or an opener — names, places, days, products. Folded to
 * lower case, accents removed.
 *
 * @since 0.1.0
 * @category slots
 */
export const valuesOf = (text: string): ReadonlySet<string> => {
  const normalized = text
    .replace(/\b(\d{1,2})(?::00)?\s*([ap])\.?m\b\.?/giu, "$1$2m")
    .replace(/\b(\d{1,2}):00\b/gu, "$1")
  const values = new Set<string>()
  let sentenceStart = true
  let previousEnd = 0
  for (const match of normalized.matchAll(wordPattern)) {
    const between = normalized.slice(previousEnd, match.index)
    if (/[.!?]\s*$/u.test(between) || /\n/u.test(between)) sentenceStart = true
    const word = match[0].replace(/[.:/-]+$/u, "")
    const folded = addressTokens(word).join("")
    if (/\p{N}/u.test(word)) values.add(folded)
    else if (!sentenceStart && /^\p{Lu}/u.test(word) && !unremarkable.has(word.toLowerCase())) values.add(folded)
    sentenceStart = false
    previousEnd = match.index + match[0].length
  }
  if (values.size > 0) return values
  // A text that is only its value ("Doug", "Tuesday"): its words are the value.
  const words = [...normalized.matchAll(wordPattern)].map((m) => m[0])
  if (words.length > 3) return values
  for (const word of words) {
    if (!unremarkable.has(word.toLowerCase())) values.add(addressTokens(word).join(""))
  }
  return values
}

/**
 * True when `candidate` restates `holder`'s value: they state the same values ({@link valuesOf})
 * and at least one. A correction names a value the holder does not ("Douglas, not Doug"); two
 * texts with no names or numbers are never taken as one value — the choice errs toward a proposal
 * an operator sees, never toward a correction silently dropped. Callers check the slot first.
 *
 * @since 0.1.0
 * @category slots
 */
export const restates = (candidate: string, holder: string): boolean => {
  const x = valuesOf(candidate)
  const y = valuesOf(holder)
  return x.size > 0 && x.size === y.size && [...x].every((value) => y.has(value))
}
