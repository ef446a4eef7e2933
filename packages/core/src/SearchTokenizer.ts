/**
 * The one tokenizer every backend indexes and queries with, so that no backend has search
 * semantics of its own: in-memory, SQLite and PostgreSQL all match on these tokens.
 *
 * It agrees with SQLite FTS5's `unicode61 remove_diacritics 2` tokenizer on Latin, Cyrillic,
 * Greek and CJK text (pinned by the conformance corpus).
 *
 * @since 0.1.0
 */

const combiningMarks = /\p{M}+/gu
const tokenSeparators = /[^\p{L}\p{N}]+/u

/**
 * Splits text into search tokens: Unicode NFKD, diacritics (combining marks) removed, case
 * folded, split on every character that is not a letter or digit in any script, empty tokens
 * dropped. Order and repeats are kept.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const tokenize = (text: string): ReadonlyArray<string> =>
  text
    .normalize("NFKD")
    .replace(combiningMarks, "")
    .toLowerCase()
    // Case folding maps the Greek final sigma onto sigma, as FTS5 does.
    .replace(/ς/g, "σ")
    .split(tokenSeparators)
    .filter((token) => token.length > 0)

/**
 * The distinct tokens of a text, in first-seen order.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const distinctTokens = (text: string): ReadonlyArray<string> => [...new Set(tokenize(text))]

/**
 * The text a record is searched by: its label, content and tags.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const searchableText = (record: {
  readonly label?: string | undefined
  readonly content: string
  readonly tags: ReadonlyArray<string>
}): string => [record.label ?? "", record.content, ...record.tags].join("\n")
