import { type SearchPlan, SearchTokenizer, Sha256 } from "@engram/core"

// PostgreSQL refuses lexemes longer than 2047 bytes. A longer token is stored and queried as
// "~" + its SHA-256: "~" never occurs in a token (tokens are letters and digits), so the stand-in
// matches exactly the same token and nothing else.
const MAX_LEXEME_BYTES = 2_000

/** The lexeme a token is indexed and queried as. */
export const lexemeOf = (token: string): string =>
  Buffer.byteLength(token, "utf8") <= MAX_LEXEME_BYTES ? token : `~${Sha256.hex(token)}`

/**
 * A record's lexemes: the shared tokenizer's tokens of its searchable text, in order. They are
 * stored space-separated and turned into a `tsvector` with `array_to_tsvector`, which takes each
 * lexeme verbatim — PostgreSQL's text-search parser never sees them, so it cannot split, drop or
 * re-fold a token that the tokenizer produced.
 */
export const lexemesOf = (record: {
  readonly label?: string | undefined
  readonly content: string
  readonly tags: ReadonlyArray<string>
}, language: SearchTokenizer.Language): ReadonlyArray<string> =>
  SearchTokenizer.tokenize(SearchTokenizer.searchableText(record), language).map(lexemeOf)

/** BM25's length of a record: its distinct lexemes (what `length(search_vector)` counts). */
export const searchLength = (lexemes: ReadonlyArray<string>): number => new Set(lexemes).size

/** One lexeme as a quoted `tsquery` operand: quotes doubled, backslashes escaped. */
export const quoteLexeme = (lexeme: string): string => `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`

/**
 * The `tsquery` for a search text: the distinct tokens, each quoted, OR-joined — a record matches
 * when it shares at least one whole token with the query. `undefined` when the text has no tokens.
 */
export const searchQuery = (
  text: string,
  language: SearchTokenizer.Language = SearchTokenizer.DEFAULT_LANGUAGE
): string | undefined => {
  const tokens = SearchTokenizer.distinctTokens(text, language)
  return tokens.length === 0 ? undefined : anyOf(tokens)
}

const anyOf = (tokens: ReadonlyArray<string>): string => tokens.map((token) => quoteLexeme(lexemeOf(token))).join(" | ")

/** The `tsquery` of one planned tier: any `include` token and none of the `exclude` tokens. */
export const tierQuery = (tier: SearchPlan.Tier): string =>
  tier.exclude.length === 0 ? anyOf(tier.include) : `(${anyOf(tier.include)}) & !(${anyOf(tier.exclude)})`
