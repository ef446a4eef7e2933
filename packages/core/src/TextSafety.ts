/**
 * The one sanitiser for text that reaches a model or a terminal. Every renderer — Background
 * entries and headings in the stable prefix, the projection's envelope lines and labels, the CLI's
 * output — goes through these functions, so the rules cannot drift apart.
 *
 * Characters a reader cannot see or that change how the rest of the text reads are *unsafe*:
 * C0 and C1 controls (U+001E included, a record separator many readers treat as a line break),
 * DEL, the line and paragraph separators, bidi controls (U+061C, U+200E/F, U+202A–U+202E,
 * U+2066–U+2069), zero-width characters (U+200B, U+2060, U+FEFF, U+180E), Unicode tag characters
 * (U+E0000–U+E007F, which can spell hidden ASCII), and the joiners U+200C (ZWNJ) and U+200D (ZWJ)
 * wherever they join nothing. A joiner is text, not a hiding place, where it does its work
 * (decision 0057): a ZWJ inside an emoji sequence (right after a pictograph, its VS16 or skin-tone
 * modifier between, and right before another — 👩‍💻, 🏳️‍🌈), and a ZWNJ
 * or ZWJ between two letters or marks of one script whose shaping joiners control (the cursive
 * scripts — Arabic, Syriac, N'Ko, Mongolian, … — and the Brahmic scripts, where they choose
 * between a conjunct and a half form), so a Persian name written with a ZWNJ keeps its shape.
 * For a model unsafe characters are removed (line breaks and other controls become a space on one
 * line); for a terminal they are shown as visible `\u{…}` escapes.
 * Look-alikes of the projection's own tags (`</injected_memory>`, …) lose their `<`, in the prefix
 * as in the envelope, so no stored text can forge a marker.
 *
 * @since 0.1.0
 */
import { onFirstCall } from "./internal/onFirstCall.js"
import { neutralize } from "./internal/reservedTags.js"

// Controls: every C0 and C1 control but tab, DEL, and the line and paragraph separators.
const control = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u2028\u2029]/u
// Invisible characters that reorder or hide text: bidi controls, zero-width characters, tag
// characters — and the joiners, which `joins` spares where they join.
const invisible = /[\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/gu
const controlRun =
  /\s*[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u2028\u2029][\s\u0000-\u0008\u000A-\u001F\u007F-\u009F\u2028\u2029]*/gu
const blockControl = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/gu
const unsafeForTerminal =
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u180E\u200B-\u200F\u2028\u2029\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/gu

const ZWJ = 0x200d
const hasJoiner = /[\u200C\u200D]/u
const joiners = /[\u200C\u200D]/gu
const letter = /^[\p{L}\p{M}]$/u
// An emoji element ending a text (a pictograph with its VS16 or skin-tone modifiers; the window
// read is 16 code units, room for seven modifiers), and a pictograph starting one.
const emojiElementBefore = /\p{Extended_Pictographic}[\uFE0F\p{Emoji_Modifier}]*$/u
const pictographAfter = /^\p{Extended_Pictographic}/u
// Made on first use: building the 38 Script_Extensions sets below costs some 25 ms of CPU, and
// only text with a joiner needs them.
/**
 * The scripts whose shaping a ZWNJ or ZWJ between two of their letters changes: the cursive
 * (joining) scripts, and the Brahmic scripts whose conjuncts they break or keep. JavaScript exposes
 * neither `Joining_Type` nor `Indic_Syllabic_Category`, so the scripts are named; each is matched by
 * its `Script_Extensions` property (decision 0057).
 */
const joiningScripts = onFirstCall((): () => ReadonlyArray<RegExp> => {
  const scripts = [
    "Arabic",
    "Syriac",
    "Nko",
    "Mongolian",
    "Mandaic",
    "Manichaean",
    "Phags_Pa",
    "Psalter_Pahlavi",
    "Sogdian",
    "Old_Uyghur",
    "Hanifi_Rohingya",
    "Adlam",
    "Chorasmian",
    "Devanagari",
    "Bengali",
    "Gurmukhi",
    "Gujarati",
    "Oriya",
    "Tamil",
    "Telugu",
    "Kannada",
    "Malayalam",
    "Sinhala",
    "Khmer",
    "Myanmar",
    "Tibetan",
    "Balinese",
    "Javanese",
    "Sundanese",
    "Tai_Tham",
    "Chakma",
    "Grantha",
    "Newa",
    "Tirhuta",
    "Sharada",
    "Takri",
    "Kaithi",
    "Brahmi"
  ].map((script) => new RegExp(`^(?=[\\p{L}\\p{M}])\\p{scx=${script}}$`, "u"))
  return () => scripts
})

const sameJoiningScript = (before: string, after: string): boolean =>
  joiningScripts().some((script) => script.test(before) && script.test(after))

/**
 * The UTF-16 offsets of the joiners in `text` that join something (see the module description):
 * a ZWJ right after a pictograph (its VS16 or skin-tone modifier between) and right before
 * another; a ZWNJ or ZWJ between two letters or marks of one joining script. Every other joiner is
 * unsafe. Only the joiner's own neighbours are read, so a joiner beside a character the caller
 * removes or escapes is unsafe with it, and whatever is kept still joins in the output.
 */
const joins = (text: string): ReadonlySet<number> => {
  const kept = new Set<number>()
  if (!hasJoiner.test(text)) return kept
  for (const match of text.matchAll(joiners)) {
    const at = match.index
    if (text.charCodeAt(at) === ZWJ && joinsEmoji(text, at)) {
      kept.add(at)
      continue
    }
    const before = codePointBefore(text, at)
    const after = at + 1 < text.length ? String.fromCodePoint(text.codePointAt(at + 1)!) : ""
    if (letter.test(before) && letter.test(after) && sameJoiningScript(before, after)) kept.add(at)
  }
  return kept
}

/**
 * True when the ZWJ at `at` binds an emoji ZWJ sequence (UTS #51, ED-16): an emoji element ends
 * right before it (a pictograph, then any VS16 or skin-tone modifiers) and a pictograph follows.
 * The grapheme segmenter is not asked: a cluster also holds `Extend` characters — a ZWNJ, a tag
 * character, a combining mark — between the pictograph and the joiner, and the sanitiser removes
 * those, which would leave the joiner beside something it never joined.
 */
const joinsEmoji = (text: string, at: number): boolean =>
  pictographAfter.test(text.slice(at + 1, at + 3)) && emojiElementBefore.test(text.slice(Math.max(0, at - 16), at))

/** The code point that ends just before `at` (a surrogate pair read whole), or "". */
const codePointBefore = (text: string, at: number): string => {
  if (at === 0) return ""
  const low = text.charCodeAt(at - 1)
  const pair = low >= 0xdc00 && low <= 0xdfff && at >= 2
  return String.fromCodePoint(text.codePointAt(pair ? at - 2 : at - 1)!)
}

/** Text with every invisible character removed but the joiners that join. */
const withoutInvisible = (text: string): string => {
  const kept = joins(text)
  return text.replace(invisible, (ch, offset: number) => (kept.has(offset) ? ch : ""))
}

/**
 * The text with every invisible character removed — bidi controls, zero-width characters, tag
 * characters, joiners that join nothing — and everything else kept, line breaks and controls
 * included. What the poisoning screen reads (`InstructionScreen`), so it sees the words a model
 * would see once the text is made safe.
 *
 * @since 0.1.0
 * @category rendering
 */
export const visibleText = (text: string): string => withoutInvisible(text)

/**
 * True when the text holds an unsafe character (see the module description).
 *
 * @since 0.1.0
 * @category predicates
 */
export const hasUnsafe = (text: string): boolean => control.test(text) || withoutInvisible(text) !== text

/**
 * Text for one line of a prompt: invisible characters removed, every run of whitespace holding a
 * control character (line breaks included) collapsed to one space, look-alikes of the
 * projection's tags defused. Used for every Background key, value and heading, every envelope
 * line and every label.
 *
 * @since 0.1.0
 * @category rendering
 */
export const safeLine = (text: string): string => {
  const visible = withoutInvisible(text)
  // Collapsing runs costs a backtracking scan at every space; most text has no control to collapse.
  return neutralize(control.test(visible) ? visible.replace(controlRun, " ") : visible)
}

/**
 * Text for a multi-line block of a prompt (working state): unsafe characters removed, line breaks
 * and tabs kept, look-alikes of the projection's tags defused.
 *
 * @since 0.1.0
 * @category rendering
 */
export const safeBlock = (text: string): string =>
  neutralize(withoutInvisible(text).replace(/\r\n?|[\u0085\u2028\u2029]/g, "\n").replace(blockControl, " "))

/**
 * Text for a terminal: every unsafe character — escape sequences' ESC included — shown as a
 * visible `\u{…}` escape (a joiner that joins is not unsafe, and is kept), so stored text can
 * neither move the cursor, recolour the screen nor reorder what is printed. Line feeds and tabs
 * are kept.
 *
 * @since 0.1.0
 * @category rendering
 */
export const escapeForTerminal = (text: string): string => {
  const kept = joins(text)
  return text.replace(
    unsafeForTerminal,
    (ch, offset: number) => (kept.has(offset) ? ch : `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase()}}`)
  )
}
