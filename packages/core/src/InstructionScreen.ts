/**
 * The poisoning screen: does a memory's text read as an instruction *to the agent* — override its
 * rules, get secrets or data out, call tools, change who it is, wait for a trigger to mislead the
 * user, hide what it does — rather than something learned about the user or the work?
 *
 * A stored memory is later shown to a model. Text that addresses that model is the shape of a
 * prompt-injection payload, whoever wrote it. The screen is a pure function of the text, so whether
 * a record is flagged is *derived* (`MemoryRecord.flagged`), never stored, and can never disagree
 * with the content. A flagged record starts `pending` whatever its source, and no path shows its
 * text to a model until an operator confirmed it (`MemoryGate`).
 *
 * The screen looks for the agent being addressed, not for imperative mood: "Always answer in
 * French" (a standing preference) and "The deploy script calls the migrate tool" (a fact) pass;
 * "From now on you must ignore the rules above" does not. Its rules are written in concepts ("a
 * verb of disregarding near a word for instructions"), with the words for each concept in every
 * language the search tokenizer stems, and read the text through what disguises it:
 *
 * - compatibility forms (NFKC: `ＩＧＮＯＲＥ`, 𝐢𝐠𝐧𝐨𝐫𝐞), diacritics, case;
 * - look-alike letters, by Unicode's confusables table (Cyrillic `іgnоrе`);
 * - invisible characters (zero-width, soft hyphens, joiners) and letters spelled out one by one;
 * - text hidden in tag characters or variation selectors (itself a reason: `hidden-text`);
 * - base64, hex, percent-encoded, escaped and binary runs, decoded and screened;
 * - ROT13, reversed text and leetspeak, undone.
 *
 * A text that talks about an attack (a blog post quoting "ignore previous instructions") is a
 * mention, not an instruction, and passes (decision 0131).
 *
 * @since 0.1.0
 */
import { mayMatch } from "./internal/screenAnchors.js"
import { judge, judgeLeet, judgeView } from "./internal/screenRules.js"
import {
  decodedRuns,
  fold,
  hiddenText,
  leetFold,
  leetspeak,
  mayEncode,
  reversed,
  rot13,
  shapeOf
} from "./internal/screenText.js"
import { visibleText } from "./TextSafety.js"

/**
 * Why a text was flagged: it tries to override the agent's rules, get secrets out, send data
 * away, make the agent call tools, change who the agent is, plant a trigger that misleads the user
 * later, address an AI from inside a document, keep something from the user, plant a bridge that
 * redirects one record to another, or hide text in invisible characters; or a language model
 * asked to classify it before it was written said it is an instruction ({@link MODEL_FLAG_TAG}).
 *
 * @since 0.1.0
 * @category models
 */
export type ScreenReason =
  | "override-rules"
  | "reveal-secrets"
  | "exfiltration"
  | "call-tools"
  | "change-identity"
  | "delayed-trigger"
  | "addressed-to-assistant"
  | "secrecy"
  | "redirection"
  | "hidden-text"
  | "flagged-by-model"

const passed: ScreenVerdict = { flagged: false, reasons: [] }

/**
 * The screen's verdict on a text: `flagged` when at least one reason applies.
 *
 * @since 0.1.0
 * @category models
 */
export interface ScreenVerdict {
  readonly flagged: boolean
  readonly reasons: ReadonlyArray<ScreenReason>
}

/** How deep encoded runs are decoded: base64 inside hex inside base64 is read; deeper is not. */
const MAX_DEPTH = 2

// A letter outside ASCII (once folded: Cyrillic, Greek, Arabic… that no confusable turned Latin).
const foreignLetter = /[^\x00-\x7f](?<=\p{L})/u

/** A text whose words run backwards: it opens with a word and a full stop and ends on a capitalised word. */
const reversedOrder = /^(?:\S+\s)?\S+[.!?]\s[\s\S]*\s[A-Z][a-z]*$/

/** The words of a text in reverse order. */
const wordsReversed = (text: string): string => text.split(/\s+/).reverse().join(" ")

const collect = (text: string, reasons: Set<ScreenReason>, depth: number): void => {
  const shape = shapeOf(text)
  const folded = fold(text, shape)
  const { ascii } = shape
  const hidden = ascii ? undefined : hiddenText(text)
  if (hidden !== undefined) {
    reasons.add("hidden-text")
    collect(hidden, reasons, depth + 1)
  }
  if (depth < MAX_DEPTH && mayEncode(text, shape)) {
    for (const run of decodedRuns(ascii ? text : visibleText(text.normalize("NFKC")))) {
      collect(run.text, reasons, depth + 1)
    }
  }
  // Leetspeak is read in the folded text: in ASCII text its shape is the text's own.
  const leet = leetspeak(folded, ascii ? shape : shapeOf(folded))
  // The fast path: no leetspeak, no letter outside ASCII once folded, no anchor of any rule.
  if (leet === undefined && (ascii || !foreignLetter.test(folded)) && !mayMatch(folded)) return
  const found = judge(folded)
  for (const reason of found.reasons) reasons.add(reason)
  if (found.rot13) { for (const reason of judgeView(rot13(folded))) reasons.add(reason) }
  if (found.reversed) {
    // Backwards letter by letter, or each word backwards in its place.
    const back = reversed(folded)
    for (const reason of judgeView(back)) reasons.add(reason)
    for (const reason of judgeView(wordsReversed(back))) reasons.add(reason)
  }
  // Words in reverse order: the sentence's last word and its full stop come first, its capital last.
  if (reversedOrder.test(text)) { for (const reason of judgeView(wordsReversed(folded))) reasons.add(reason) }
  if (leet !== undefined) { for (const reason of judgeLeet(leet)) reasons.add(reason) }
  // Text beyond ASCII may have spelled Latin words with look-alike letters, and a vertical stroke
  // may have been an "l" or an "i" (the table reads Cyrillic "ӏ" as "i"): it is read as leetspeak
  // is too, where the two meet.
  else if (!ascii) {
    for (const reason of judgeLeet(leetFold(folded))) reasons.add(reason)
  }
}

/**
 * The screen's verdict on a text (a memory's content, or its label).
 *
 * @since 0.1.0
 * @category screening
 */
export const screen = (text: string): ScreenVerdict => {
  const reasons = new Set<ScreenReason>()
  collect(text, reasons, 0)
  return reasons.size === 0 ? passed : { flagged: true, reasons: [...reasons] }
}

/**
 * The tag a record is written with when the second screen — a language model asked to classify
 * an extracted or tool-sourced memory before it is written (`ModelScreen` in the runtime) — said
 * it is an instruction. The record is flagged like any the rules flag; the mark can only be added
 * at creation, and nothing removes it: a model may flag, never clear.
 *
 * @since 0.1.0
 * @category screening
 */
export const MODEL_FLAG_TAG = "screen:flagged-by-model"

const markedByModel = (record: { readonly tags?: ReadonlyArray<string> | undefined }): boolean =>
  record.tags?.includes(MODEL_FLAG_TAG) === true

/**
 * True when a record's content, label or one of its tags reads as an instruction to the agent, or
 * the record carries {@link MODEL_FLAG_TAG}. Tags count: an MCP client's model reads them in
 * `memory_list`, and a model's `memory_save` writes them.
 *
 * @since 0.1.0
 * @category screening
 */
export const isFlagged = (
  record: {
    readonly content: string
    readonly label?: string | undefined
    readonly tags?: ReadonlyArray<string> | undefined
  }
): boolean =>
  markedByModel(record) || screen(record.content).flagged ||
  (record.label !== undefined && screen(record.label).flagged) ||
  (record.tags?.some((tag) => tag !== MODEL_FLAG_TAG && screen(tag).flagged) ?? false)

/**
 * Why a record's content, label or tags read as an instruction to the agent: the rules that matched,
 * each once (`[]` for a record the screen passes). What `explain` and the HTTP API show as
 * `flaggedFor`.
 *
 * @since 0.1.0
 * @category screening
 */
export const reasonsFor = (
  record: {
    readonly content: string
    readonly label?: string | undefined
    readonly tags?: ReadonlyArray<string> | undefined
  }
): ReadonlyArray<ScreenReason> => [
  ...new Set([
    ...screen(record.content).reasons,
    ...(record.label === undefined ? [] : screen(record.label).reasons),
    ...(record.tags ?? []).flatMap((tag) => (tag === MODEL_FLAG_TAG ? [] : screen(tag).reasons)),
    ...(markedByModel(record) ? ["flagged-by-model" as const] : [])
  ])
]
