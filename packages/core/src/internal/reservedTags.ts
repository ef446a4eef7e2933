/**
 * Neutralising the projection's own tags inside text that flows into it.
 *
 * A "tag-like" sequence is a less-than sign — `<`, or a character that decomposes to one (`＜`,
 * `﹤`, `≮`) — followed by one of the reserved tag names, where the comparison ignores case,
 * diacritics and compatibility forms (NFKD: fullwidth letters, ligatures), and skips whitespace,
 * control and invisible formatting characters, `/`, `_` and `-` anywhere. So `</injected_memory>`,
 * `< / Injected-Memory >`, `<\u200binjected_memory>` and `＜ｉｎｊｅｃｔｅｄ_memory＞` are all
 * tag-like. Neutralising replaces that less-than character with `&lt;`; nothing else changes.
 */

/** Every tag the projection emits. */
export const RESERVED_TAG_NAMES = [
  "injected_memory",
  "working_state",
  "skills_index",
  "identity_memory",
  "always_on_memory",
  "prior_sessions",
  "recalled_memory"
] as const

const lessThanLike = /[<\u226E\uFE64\uFF1C]/gu
const ignorable = /[\s\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\/_-]/u
const combiningMarks = /\p{M}/gu
const folded = RESERVED_TAG_NAMES.map((name) => name.replace(/_/g, ""))

const names = new Set(folded)
const namePrefixes = new Set(
  folded.flatMap((name) => Array.from({ length: name.length }, (_, i) => name.slice(0, i + 1)))
)

const foldCodePoint = (ch: string): string =>
  ch.normalize("NFKD").toLowerCase().normalize("NFKD").replace(combiningMarks, "")

const isAsciiIgnorable = (code: number): boolean =>
  code <= 0x20 || code === 0x7f || code === 0x2f /* / */ || code === 0x5f /* _ */ || code === 0x2d /* - */

/**
 * True when the text from `from` on spells a reserved tag name, once folded and with ignorable
 * characters skipped. Stops at the first character that no reserved name continues with; as no
 * less-than-like character is ignorable or part of a name, scans started at different less-than
 * characters never overlap, so a whole text is checked in linear time.
 */
const spellsReservedName = (text: string, from: number): boolean => {
  let spelled = ""
  const extend = (c: string): boolean | undefined => {
    spelled += c
    if (names.has(spelled)) return true
    return namePrefixes.has(spelled) ? undefined : false
  }
  for (let i = from; i < text.length;) {
    const code = text.codePointAt(i)!
    if (code < 0x80) {
      i++
      if (isAsciiIgnorable(code)) continue
      const verdict = extend(String.fromCharCode(code >= 0x41 && code <= 0x5a ? code + 0x20 : code))
      if (verdict !== undefined) return verdict
      continue
    }
    const width = code > 0xffff ? 2 : 1
    for (const c of foldCodePoint(text.slice(i, i + width))) {
      if (ignorable.test(c)) continue
      const verdict = extend(c)
      if (verdict !== undefined) return verdict
    }
    i += width
  }
  return false
}

/**
 * The text with every tag-like sequence's less-than character replaced by `&lt;`. Text without
 * any less-than-like character is returned as is (the common, fast case).
 */
export const neutralize = (text: string): string => {
  let out = ""
  let copied = 0
  for (const match of text.matchAll(lessThanLike)) {
    const end = match.index + match[0].length
    if (!spellsReservedName(text, end)) continue
    out += text.slice(copied, match.index) + "&lt;"
    copied = end
  }
  return copied === 0 ? text : out + text.slice(copied)
}
