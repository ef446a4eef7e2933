/**
 * The shared Tier 2 search corpus: records with fixed ids, and the queries every keyword-search
 * backend must answer with exactly the same match sets.
 *
 * Every stored text in the corpus (label, content, tags) tokenizes the same way under the shared
 * tokenizer and under SQLite FTS5's `unicode61 remove_diacritics 2`, so a backend can also check
 * its native tokenizer against `SearchTokenizer.tokenize` over these texts. The queries are free
 * to go further (Greek accents, curly apostrophes): they reach every backend through the shared
 * tokenizer, never through a native one.
 *
 * @since 0.1.0
 */
import type { MemoryQuery, MemoryRecord } from "@engram/core"

/**
 * A corpus entry: a write input with a fixed id.
 *
 * @since 0.1.0
 * @category models
 */
export type CorpusEntry = MemoryRecord.MemoryWriteInput & { readonly id: string }

/**
 * The shared corpus. Written in one batch, so every entry has the same `createdAt`.
 *
 * @since 0.1.0
 * @category corpus
 */
export const searchCorpus: ReadonlyArray<CorpusEntry> = [
  {
    id: "profile-name",
    label: "name",
    content: "My name is Doug",
    tags: ["identity"],
    kind: "profile",
    sourceType: "operator",
    deliveryPolicy: "always"
  },
  {
    id: "coffee",
    content: "Doug prefers dark roast coffee in the morning",
    kind: "profile",
    sourceType: "conversation"
  },
  {
    id: "cafe-zurich",
    content: "Café in Zürich: ask the Señor for crème brûlée",
    kind: "note",
    sourceType: "extracted"
  },
  {
    id: "contact-email",
    content: "Send e-mail to doug@example.com before the v2.0 release",
    kind: "standing",
    scope: "project:alpha"
  },
  {
    id: "obrien-review",
    content: "O'Brien reviewed the deploy checklist",
    kind: "episode",
    sourceType: "conversation",
    scope: "project:alpha"
  },
  { id: "moscow", content: "Встреча в Москве по пятницам", kind: "episode", sourceType: "harvest" },
  { id: "athens", content: "ΤΑΞΙΔΙ ΣΤΗΝ ΑΘΗΝΑ ΜΕ ΤΟΥΣ ΦΙΛΟΥΣ", kind: "episode", sourceType: "harvest" },
  { id: "tokyo", content: "東京 会議 日本語", kind: "note", sourceType: "ingest" },
  {
    id: "lisbon",
    label: "timezone",
    content: "Works from Lisbon in winter",
    tags: ["travel-plans", "Portugal"],
    kind: "fact",
    sourceType: "operator"
  },
  { id: "copenhagen", content: "Smørrebrød in København before the Åland ferry", kind: "note" },
  { id: "naive", content: "The naïve coöperative façade", kind: "reference", sourceType: "ingest" },
  { id: "amsterdam", content: "AMSTERDAM ROTTERDAM", kind: "fact", sourceType: "extracted" },
  { id: "am-here", content: "I am here until Friday", kind: "note", sourceType: "conversation" },
  {
    id: "alpha-db",
    content: "Alpha keeps its storage in PostgreSQL",
    kind: "decision",
    sourceType: "operator",
    scope: "project:alpha"
  },
  {
    id: "beta-db",
    content: "Beta keeps its storage in SQLite",
    kind: "decision",
    sourceType: "operator",
    scope: "project:beta"
  },
  {
    id: "storage-quota",
    content: "Storage quotas are reviewed monthly",
    kind: "note",
    scope: "session:s1",
    deliveryPolicy: "on_demand"
  }
]

/**
 * What a search case demonstrates.
 *
 * @since 0.1.0
 * @category models
 */
export type SearchCaseCategory =
  | "case folding"
  | "diacritic folding"
  | "punctuation"
  | "whole tokens"
  | "word forms"
  | "non-Latin scripts"
  | "multi-token OR"
  | "label and tags"
  | "no tokens"
  | "filters"
  | "scope isolation"

/**
 * One query over {@link searchCorpus} and the ids it must match, sorted (never a rank order).
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchCase {
  readonly category: SearchCaseCategory
  readonly query: string
  readonly options?: MemoryQuery.SearchOptions
  readonly expected: ReadonlyArray<string>
}

const dougIds = ["coffee", "contact-email", "profile-name"]

/**
 * The Tier 2 cases. `expected` is the sorted id set every keyword backend must return.
 *
 * @since 0.1.0
 * @category corpus
 */
export const searchCases: ReadonlyArray<SearchCase> = [
  { category: "case folding", query: "doug", expected: dougIds },
  { category: "case folding", query: "DOUG", expected: dougIds },
  { category: "case folding", query: "dOuG", expected: dougIds },
  { category: "case folding", query: "amsterdam", expected: ["amsterdam"] },

  { category: "diacritic folding", query: "cafe", expected: ["cafe-zurich"] },
  { category: "diacritic folding", query: "CAFÉ", expected: ["cafe-zurich"] },
  { category: "diacritic folding", query: "zurich", expected: ["cafe-zurich"] },
  { category: "diacritic folding", query: "senor", expected: ["cafe-zurich"] },
  { category: "diacritic folding", query: "creme brulee", expected: ["cafe-zurich"] },
  { category: "diacritic folding", query: "aland", expected: ["copenhagen"] },
  { category: "diacritic folding", query: "naive cooperative facade", expected: ["naive"] },
  // ø is a letter of its own (no decomposition): folded for case, never to "o".
  { category: "diacritic folding", query: "SMØRREBRØD", expected: ["copenhagen"] },
  { category: "diacritic folding", query: "kobenhavn", expected: [] },

  { category: "punctuation", query: "e-mail", expected: ["contact-email"] },
  { category: "punctuation", query: "mail", expected: ["contact-email"] },
  { category: "punctuation", query: "email", expected: [] },
  { category: "punctuation", query: "example.com", expected: ["contact-email"] },
  // An address is three tokens, OR-joined: every record mentioning Doug matches.
  { category: "punctuation", query: "doug@example.com", expected: dougIds },
  { category: "punctuation", query: "v2.0", expected: ["contact-email"] },
  { category: "punctuation", query: "v2", expected: ["contact-email"] },
  { category: "punctuation", query: "v20", expected: [] },
  { category: "punctuation", query: "O'Brien", expected: ["obrien-review"] },
  { category: "punctuation", query: "O’Brien", expected: ["obrien-review"] },
  { category: "punctuation", query: "brien", expected: ["obrien-review"] },
  { category: "punctuation", query: "obrien", expected: [] },

  { category: "whole tokens", query: "am", expected: ["am-here"] },
  { category: "whole tokens", query: "nam", expected: [] },
  { category: "whole tokens", query: "name", expected: ["profile-name"] },
  // Word forms: tokens are English stems (decision 0049), so "prefer" finds "prefers" and
  // "review" finds "reviewed"/"reviews" — the only cases stemming changed.
  { category: "word forms", query: "prefer", expected: ["coffee"] },
  { category: "whole tokens", query: "prefers", expected: ["coffee"] },
  { category: "whole tokens", query: "rotter", expected: [] },
  { category: "word forms", query: "review", expected: ["obrien-review", "storage-quota"] },
  { category: "word forms", query: "preferring", expected: ["coffee"] },

  { category: "non-Latin scripts", query: "москве", expected: ["moscow"] },
  { category: "non-Latin scripts", query: "МОСКВЕ", expected: ["moscow"] },
  { category: "non-Latin scripts", query: "москва", expected: [] },
  { category: "non-Latin scripts", query: "αθηνα", expected: ["athens"] },
  { category: "non-Latin scripts", query: "Αθήνα", expected: ["athens"] },
  // Tonos removed and the final sigma folded onto σ.
  { category: "non-Latin scripts", query: "φίλους", expected: ["athens"] },
  { category: "non-Latin scripts", query: "φιλου", expected: [] },
  { category: "non-Latin scripts", query: "東京", expected: ["tokyo"] },
  { category: "non-Latin scripts", query: "日本語", expected: ["tokyo"] },
  { category: "non-Latin scripts", query: "東", expected: [] },

  // The tokens of each query never occur together in one record: AND semantics returns nothing.
  { category: "multi-token OR", query: "lisbon rotterdam", expected: ["amsterdam", "lisbon"] },
  { category: "multi-token OR", query: "PostgreSQL SQLite", expected: ["alpha-db", "beta-db"] },
  { category: "multi-token OR", query: "москве 東京 café", expected: ["cafe-zurich", "moscow", "tokyo"] },

  { category: "label and tags", query: "timezone", expected: ["lisbon"] },
  { category: "label and tags", query: "portugal", expected: ["lisbon"] },
  { category: "label and tags", query: "travel", expected: ["lisbon"] },
  { category: "label and tags", query: "identity", expected: ["profile-name"] },

  { category: "no tokens", query: "", expected: [] },
  { category: "no tokens", query: "   ", expected: [] },
  { category: "no tokens", query: "?! … — @#", expected: [] },
  { category: "no tokens", query: "'", expected: [] },

  { category: "filters", query: "storage", expected: ["alpha-db", "beta-db", "storage-quota"] },
  { category: "filters", query: "storage", options: { kinds: ["decision"] }, expected: ["alpha-db", "beta-db"] },
  { category: "filters", query: "storage", options: { deliveryPolicies: ["on_demand"] }, expected: ["storage-quota"] },
  { category: "filters", query: "doug", options: { reviewStates: ["confirmed"] }, expected: ["profile-name"] },
  { category: "filters", query: "doug", options: { reviewStates: ["pending"] }, expected: ["coffee", "contact-email"] },
  { category: "filters", query: "doug", options: { deliveryPolicies: ["always"] }, expected: ["profile-name"] },
  { category: "filters", query: "storage", options: { kinds: [] }, expected: [] },
  { category: "filters", query: "storage", options: { reviewStates: [] }, expected: [] },

  { category: "scope isolation", query: "storage", options: { scopes: ["project:alpha"] }, expected: ["alpha-db"] },
  {
    category: "scope isolation",
    query: "storage",
    options: { scopes: ["project:beta", "session:s1"] },
    expected: ["beta-db", "storage-quota"]
  },
  { category: "scope isolation", query: "doug", options: { scopes: ["project:alpha"] }, expected: ["contact-email"] },
  { category: "scope isolation", query: "doug", options: { scopes: ["global"] }, expected: ["coffee", "profile-name"] },
  { category: "scope isolation", query: "storage", options: { scopes: ["project:alph"] }, expected: [] },
  { category: "scope isolation", query: "storage", options: { scopes: ["project:ALPHA"] }, expected: [] },
  { category: "scope isolation", query: "storage", options: { scopes: [] }, expected: [] }
]
