/**
 * Memory routing: the model saves content; a developer-declared {@link MemoryRoutingSpec} decides
 * where (if anywhere) it lands in the Background.
 *
 * Routing is evaluated freely — when a memory is saved, when recall looks for candidates, in
 * previews — and committed once, at promotion, as a {@link PromotionDecision} on a promotion row.
 * The record keeps what the model observed (content, kind, tags, label); the promotion row keeps
 * what the system decided (placement, key source, spec, tier).
 *
 * Every hook of a spec is pure and synchronous, and this module performs no effects of its own:
 * it logs nothing and records no metrics. The one asynchronous step, {@link classifyThenRoute},
 * runs a caller-supplied classifier that may add advisory tags and nothing else.
 *
 * @since 0.1.0
 */
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type Background, PromotionTier } from "./Background.js"
import * as ErrorClass from "./ErrorClass.js"
import { addressTokens } from "./internal/addressTokens.js"
import { CONTENT_KEY } from "./internal/contentKey.js"
import { deepFreeze } from "./internal/deepFreeze.js"
import { fnv1a64 } from "./internal/fnv1a64.js"
import { onFirstCall } from "./internal/onFirstCall.js"
import { isPlacement } from "./internal/placementRule.js"
import { type MemoryRecord, Tag } from "./MemoryRecord.js"
import { describeParseError } from "./MemoryWrite.js"

/**
 * Where a memory lands. Version 0.1 routes into the Background only: a section id and an entry
 * key. (A discriminated union, so that later arms — judgment domains, awareness — carry their own
 * fields.)
 *
 * @since 0.1.0
 * @category models
 */
export const Placement = Schema.Struct({
  primitive: Schema.Literal("background"),
  section: Schema.String.pipe(Schema.minLength(1, { message: () => "a placement's section must not be empty" })),
  key: Schema.String.pipe(Schema.minLength(1, { message: () => "a placement's key must not be empty" }))
}).annotations({ identifier: "Placement" })
/** @since 0.1.0 @category models */
export type Placement = typeof Placement.Type

/**
 * The address of a placement as one string, `JSON.stringify([section, key])`: total, injective
 * (two placements share it only when they name the same slot) and stable. Promotion rows are
 * indexed by it.
 *
 * @since 0.1.0
 * @category addressing
 */
export const placementKey = (placement: Placement): string => JSON.stringify([placement.section, placement.key])

/**
 * Which rule gave a placement its key:
 *
 * - `canonical`: the record's label, slugified, is a key the spec declares for the section;
 * - `alias`: the slugified label is a declared alias, folded to its canonical key;
 * - `label`: any other name — normally the slugified label the spec does not declare;
 * - `statement`: the record's label names no declared key (or it has none), and its content states
 *   a single-valued key the spec declares ({@link statedKeyOf}: "my name is …"), which gave the
 *   key — so a correction saved under an unknown label, or none, meets the value it corrects
 *   (decision 0055);
 * - `content`: the key was derived from the content ({@link contentKey}), so only the same words
 *   share the address and the record is in effect append-only.
 *
 * Records whose keys agree share the address, and the newest one holds it.
 *
 * @since 0.1.0
 * @category models
 */
export const KeySource = Schema.Literal("canonical", "alias", "label", "statement", "content")
/** @since 0.1.0 @category models */
export type KeySource = typeof KeySource.Type

/**
 * A key a spec declares for a section: the canonical key (a slug: lower-case words joined by
 * `_`), the other names models use for the same thing, and optionally a few words saying what it
 * holds (shown to the model in `memory_save`'s description).
 *
 * - `single`: the key holds one value at a time (a name, a time zone — not pets). Only a single
 *   key is recognised in content ({@link statedKeyOf}): a record stating it takes the key even
 *   without a label naming it, so a second value meets the first at the save gate.
 * - `statements`: patterns (over the content, lower-cased and accent-folded) that state the key
 *   in words other than "my/the user's <name> is" — "I live in", "call me". Read only for a
 *   `single` key.
 *
 * @since 0.1.0
 * @category models
 */
export interface KeyDeclaration {
  readonly key: string
  readonly aliases?: ReadonlyArray<string> | undefined
  readonly description?: string | undefined
  readonly single?: boolean | undefined
  readonly statements?: ReadonlyArray<RegExp> | undefined
}

/**
 * The keys a spec declares, by section id. The order is the order of importance: sections as
 * listed, keys within a section as listed (name before hobbies). What survives a budget — a
 * section's spill, the identity tier — is chosen most important first ({@link importanceOf}).
 *
 * @since 0.1.0
 * @category models
 */
export type KeyVocabulary = Readonly<Record<string, ReadonlyArray<KeyDeclaration>>>

/**
 * What a spec may know about a declared section: its id, title and promotion tier — never its
 * entries, so an address never depends on what has already been composed.
 *
 * @since 0.1.0
 * @category models
 */
export interface SectionDeclaration {
  readonly id: string
  readonly title: string
  readonly promotion: PromotionTier
}

/**
 * The frozen context a spec routes in: the declared sections, in declaration order.
 *
 * @since 0.1.0
 * @category models
 */
export interface RoutingContext {
  readonly sections: ReadonlyArray<SectionDeclaration>
}

/**
 * Projects the routing context from a declared Background: ids, titles and tiers, no entries.
 *
 * @since 0.1.0
 * @category constructors
 */
export const routingContext = (background: Background): RoutingContext =>
  deepFreeze({
    sections: background.sections.map((section) => ({
      id: section.id,
      title: section.title,
      promotion: section.promotion
    }))
  })

/**
 * The parts of a record a spec routes on: what was observed and stamped at creation. Review
 * state and lifecycle are absent on purpose — they gate composition, they never move an address.
 * A {@link MemoryRecord} is a `RoutableRecord`.
 *
 * @since 0.1.0
 * @category models
 */
export type RoutableRecord = Pick<
  MemoryRecord,
  "id" | "content" | "kind" | "label" | "tags" | "scope" | "sourceType" | "deliveryPolicy" | "createdAt"
>

/**
 * What routing committed for a record, as stored on its promotion row. `placement` is `null`
 * when the spec declined the record (then `placementKey`, `keySource` and `tier` are `null` too).
 * `tier` is the section's promotion tier when the row was committed; composition always applies
 * the tier the section declares *now*.
 *
 * @since 0.1.0
 * @category models
 */
export const PromotionDecision = Schema.Struct({
  placement: Schema.NullOr(Placement),
  placementKey: Schema.NullOr(Schema.String),
  keySource: Schema.NullOr(KeySource),
  specKey: Schema.String,
  specVersion: Schema.String,
  promotedAt: Schema.DateTimeUtc,
  tier: Schema.NullOr(PromotionTier)
}).annotations({ identifier: "PromotionDecision" })
/** @since 0.1.0 @category models */
export type PromotionDecision = typeof PromotionDecision.Type

/**
 * A record joined with its promotion row: what `MemoryOverlay.applyMemoryOverlay` composes. The
 * record also carries the review state and lifecycle fields composition is gated on.
 *
 * @since 0.1.0
 * @category models
 */
export interface PlacedRecord extends PromotionDecision {
  readonly record: RoutableRecord & Pick<MemoryRecord, "reviewState" | "expiresAt" | "invalidatedAt" | "supersededBy">
}

/**
 * The order a spec wants composed memory entries in: record ids, first to last. Entries whose
 * records are not listed follow, oldest first; ids that were not offered are ignored.
 *
 * @since 0.1.0
 * @category models
 */
export interface OverlayPlan {
  readonly order: ReadonlyArray<string>
}

/**
 * A developer-declared routing spec. Every hook is pure, synchronous and total; hooks are code,
 * not configuration, so specs are resolved by name (see `RoutingSpecs`).
 *
 * - `key`, `version`: the spec's identity, stored on every promotion row it commits.
 * - `route`: the placement for a record, or `null`/`undefined` to decline it (it then stays
 *   recall-only). Returning a value that is not a valid {@link Placement}, or throwing, is a bug
 *   in the spec: {@link evaluateRoute} reports it as {@link InvalidPlacement}.
 * - `reconcile`: when two records hold one address, `a` (the newer) and `b` (the older), which
 *   one keeps it — `"a"`, `"b"`, or `"both"` to compose them into one entry. Without it, the newest
 *   record wins.
 * - `finalize`: the order of composed entries, given the composed records oldest first.
 * - `renderEntry`: the entry value for a placed record (default: the record's content). It is
 *   rendered on one line whatever it contains.
 * - `keys`: the canonical keys (with aliases) the spec declares per section. Labels fold to them
 *   ({@link foldLabel}), authored entries are compared by them, and `memory_save` shows them to
 *   the model so it reuses one address per thing.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryRoutingSpec {
  readonly key: string
  readonly version: string
  readonly keys?: KeyVocabulary | undefined
  readonly route: (record: RoutableRecord, ctx: RoutingContext) => Placement | null | undefined
  readonly reconcile?: ((a: RoutableRecord, b: RoutableRecord) => "a" | "b" | "both") | undefined
  readonly finalize: (composed: ReadonlyArray<PlacedRecord>, ctx: RoutingContext) => OverlayPlan
  readonly renderEntry?: ((placed: PlacedRecord) => string) | undefined
}

/**
 * A spec's `route` returned something that is not a {@link Placement}, or threw. This is a bug in
 * the spec: {@link evaluateRoute} returns it (never throws it); only
 * `MemoryOverlay.applyMemoryOverlay`, handed a malformed row, throws it.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidPlacement extends ErrorClass.TaggedError<InvalidPlacement>()("InvalidPlacement", {
  specKey: Schema.String,
  problem: Schema.String
}, {
  errorClass: "Misconfigured",
  message: (self) => `routing spec "${self.specKey}" produced an invalid placement (a bug in the spec): ${self.problem}`
}) {}

const decodePlacement = onFirstCall(() => Schema.decodeUnknownEither(Placement))

/**
 * Checks a placement produced by a spec (or read from a promotion row): the placement, or
 * {@link InvalidPlacement} naming what is wrong with it. Total.
 *
 * @since 0.1.0
 * @category validation
 */
export const validatePlacement = (placement: unknown, specKey: string): Either.Either<Placement, InvalidPlacement> => {
  if (isPlacement(placement)) return Either.right(placement)
  const decoded = decodePlacement(placement)
  return Either.left(
    new InvalidPlacement({
      specKey,
      problem: decoded._tag === "Left" ? describeParseError(decoded.left) : "not a placement"
    })
  )
}

/**
 * The key segment a label names: its words (case- and accent-folded, split on anything that is
 * not a letter or digit) joined with `_`. `"Name"`, `"name "` and `"NAME:"` all
 * give `"name"`; `"Time zone"` gives `"time_zone"`. Idempotent. Empty when the label has no
 * letters or digits. A slug never contains `-`, so it never collides with a {@link contentKey}.
 *
 * @since 0.1.0
 * @category addressing
 */
export const slugify = (label: string): string => addressTokens(label).join("_")

/**
 * A key derived from content: `c-` and a stable 64-bit hash (FNV-1a) of the content's words,
 * folded as in {@link slugify} (the trimmed content itself when it has none), so re-saving the
 * same words — whatever their case, accents or punctuation — gives the same key. Addresses are
 * persisted, so this folding is fixed here and does not follow changes to search tokenization.
 *
 * @since 0.1.0
 * @category addressing
 */
export const contentKey = (content: string): string => {
  const tokens = addressTokens(content)
  return `c-${fnv1a64(tokens.length > 0 ? tokens.join(" ") : content.trim())}`
}

/**
 * The key a record gets from its label alone, with no declared vocabulary: its slugified label,
 * or its content key when it has no label (or one without letters or digits).
 *
 * @since 0.1.0
 * @category addressing
 */
export const recordKey = (record: Pick<RoutableRecord, "label" | "content">): {
  readonly key: string
  readonly keySource: KeySource
} => {
  const slug = record.label === undefined ? "" : slugify(record.label)
  return slug !== "" ? { key: slug, keySource: "label" } : { key: contentKey(record.content), keySource: "content" }
}

/**
 * True when `key` has the shape of a {@link contentKey} (`c-` and 16 hex digits). Slugs never
 * contain `-`, so no label folds to one. Such keys are addresses, not names: they are never shown
 * to the model.
 *
 * @since 0.1.0
 * @category addressing
 */
export const isContentKey = (key: string): boolean => CONTENT_KEY.test(key)

interface Folded {
  readonly key: string
  readonly keySource: "canonical" | "alias"
}

const vocabularyIndexes = new WeakMap<KeyVocabulary, ReadonlyMap<string, ReadonlyMap<string, Folded>>>()

/** Per section, every declared name's slug → its canonical key (a canonical key beats an alias). */
const vocabularyIndex = (keys: KeyVocabulary): ReadonlyMap<string, ReadonlyMap<string, Folded>> => {
  const known = vocabularyIndexes.get(keys)
  if (known !== undefined) return known
  const index = new Map<string, Map<string, Folded>>()
  for (const [section, declared] of Object.entries(keys)) {
    const names = new Map<string, Folded>()
    for (const declaration of declared) {
      const key = slugify(declaration.key)
      if (key !== "") names.set(key, { key, keySource: "canonical" })
    }
    for (const declaration of declared) {
      const key = slugify(declaration.key)
      for (const alias of declaration.aliases ?? []) {
        const slug = slugify(alias)
        if (key !== "" && slug !== "" && !names.has(slug)) names.set(slug, { key, keySource: "alias" })
      }
    }
    index.set(section, names)
  }
  vocabularyIndexes.set(keys, index)
  return index
}

/**
 * Folds a name (a record's label, an authored entry key) to its key in `section`: slugified, then
 * mapped to the canonical key the spec declares for it (`canonical` or `alias`), or kept as the
 * slug (`label`) when the spec declares no such name. `undefined` when the name has no letters or
 * digits. `"First name"`, `"first_name"` and `"FULL NAME:"` all fold to `name` when the spec
 * declares them as aliases of `name`.
 *
 * @since 0.1.0
 * @category addressing
 */
export const foldLabel = (
  spec: Pick<MemoryRoutingSpec, "keys">,
  section: string,
  label: string
): { readonly key: string; readonly keySource: "canonical" | "alias" | "label" } | undefined => {
  const slug = slugify(label)
  if (slug === "") return undefined
  const folded = spec.keys === undefined ? undefined : vocabularyIndex(spec.keys).get(section)?.get(slug)
  return folded ?? { key: slug, keySource: "label" }
}

/**
 * The section and canonical key a name folds to when the spec declares it (as a key or an alias)
 * in some section — the first such section, in the order the spec lists them — or `undefined`.
 * Presets use it to place a `fact` or `note` whose label names a declared key.
 *
 * @since 0.1.0
 * @category addressing
 */
export const declaredKeyOf = (
  spec: Pick<MemoryRoutingSpec, "keys">,
  label: string
): { readonly section: string; readonly key: string; readonly keySource: "canonical" | "alias" } | undefined => {
  if (spec.keys === undefined) return undefined
  const slug = slugify(label)
  if (slug === "") return undefined
  for (const [section, names] of vocabularyIndex(spec.keys)) {
    const folded = names.get(slug)
    if (folded !== undefined) return { section, ...folded }
  }
  return undefined
}

interface Statement {
  readonly section: string
  readonly key: string
  readonly patterns: ReadonlyArray<RegExp>
}

const statementIndexes = new WeakMap<KeyVocabulary, ReadonlyArray<Statement>>()

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
const boundary = "(?:^|[^\\p{L}\\p{N}])"
const end = "(?=$|[^\\p{L}\\p{N}])"

/**
 * Per single-valued key, the patterns that state it: "my/the user's <name> is|are|was"
 * and "<name>:" at the start, for the key and each alias, then the declaration's own statements.
 */
const statementIndex = (keys: KeyVocabulary): ReadonlyArray<Statement> => {
  const known = statementIndexes.get(keys)
  if (known !== undefined) return known
  const index: Array<Statement> = []
  for (const [section, declared] of Object.entries(keys)) {
    for (const declaration of declared) {
      const key = slugify(declaration.key)
      if (declaration.single !== true || key === "") continue
      const names = [declaration.key, ...(declaration.aliases ?? [])]
        .map((name) => addressTokens(name).map(escapeRegExp).join("[^\\p{L}\\p{N}]+"))
        .filter((name) => name !== "")
      const name = `(?:${names.join("|")})`
      index.push({
        section,
        key,
        patterns: [
          new RegExp(`${boundary}(?:my|user['\u2019]?s|users)\\s+${name}(?:\\s+(?:is|are|was)|['\u2019]s)${end}`, "u"),
          new RegExp(`^\\s*${name}\\s*[:=]`, "u"),
          ...(declaration.statements ?? [])
        ]
      })
    }
  }
  statementIndexes.set(keys, index)
  return index
}

/** Content as statements are matched on: accent-folded (as addresses are) and lower-cased. */
const foldContent = (content: string): string =>
  content.normalize("NFKD").replace(/[^\P{M}\u3099\u309A]+/gu, "").toLowerCase().normalize("NFC")

/**
 * The single-valued key (a declared key marked `single`) the content states, with its section:
 * "My name is Douglas", "The user's time zone is Europe/Oslo", "Name: Doug", or one of the
 * declaration's own `statements` ("I live in Bergen"). `undefined` when the content states none,
 * or states more than one key (a record about two things is not one slot's value). The save gate
 * and the presets use it so that a record whose label names no declared key — or that has no
 * label — still takes the address of the value it states (decision 0055). Pure.
 *
 * @since 0.1.0
 * @category addressing
 */
export const statedKeyOf = (
  spec: Pick<MemoryRoutingSpec, "keys">,
  content: string
): { readonly section: string; readonly key: string } | undefined => {
  if (spec.keys === undefined) return undefined
  const statements = statementIndex(spec.keys)
  if (statements.length === 0) return undefined
  const text = foldContent(content)
  let found: Statement | undefined
  for (const statement of statements) {
    if (!statement.patterns.some((pattern) => pattern.test(text))) continue
    if (found !== undefined && (found.section !== statement.section || found.key !== statement.key)) return undefined
    found = statement
  }
  return found === undefined ? undefined : { section: found.section, key: found.key }
}

/**
 * How important a placement is under the spec's vocabulary: its rank in the declared order —
 * sections as `keys` lists them, keys within a section as listed — from 0 (most important);
 * `Number.POSITIVE_INFINITY` for a key the spec does not declare (a label of the model's own, a
 * content key). What survives a budget is chosen by it, most important first (decision 0056).
 * Pure.
 *
 * @since 0.1.0
 * @category addressing
 */
export const importanceOf = (
  spec: Pick<MemoryRoutingSpec, "keys">,
  placement: Pick<Placement, "section" | "key">
): number => {
  if (spec.keys === undefined || isContentKey(placement.key)) return Number.POSITIVE_INFINITY
  let rank = 0
  for (const [section, declared] of Object.entries(spec.keys)) {
    if (section === placement.section) {
      const at = declared.findIndex((declaration) => slugify(declaration.key) === placement.key)
      return at < 0 ? Number.POSITIVE_INFINITY : rank + at
    }
    rank += declared.length
  }
  return Number.POSITIVE_INFINITY
}

/**
 * The key a spec gives a record in `section`: the single-valued key of `section` its content
 * states ({@link statedKeyOf}, key source `statement`) when its label names another; else its
 * label folded by {@link foldLabel} when that names a declared key; otherwise its slugified label,
 * or its content key when it has no usable label.
 *
 * @since 0.1.0
 * @category addressing
 */
export const deriveKey = (
  spec: Pick<MemoryRoutingSpec, "keys">,
  section: string,
  record: Pick<RoutableRecord, "label" | "content">
): { readonly key: string; readonly keySource: KeySource } => {
  const folded = record.label === undefined ? undefined : foldLabel(spec, section, record.label)
  const stated = statedKeyOf(spec, record.content)
  // What the content states beats what the label names (decision 0170): "Actually, my name is
  // Douglas" labelled `preferred_name` is a value for the name.
  if (stated !== undefined && stated.section === section && folded?.key !== stated.key) {
    return { key: stated.key, keySource: "statement" }
  }
  if (folded !== undefined && folded.keySource !== "label") return folded
  return folded ?? { key: contentKey(record.content), keySource: "content" }
}

/**
 * The address an entry of `section` holds, compared the way routing compares keys: a content key
 * as it is, any other key folded by {@link foldLabel} (so an authored `Time zone` entry holds the
 * address a memory labelled `timezone` would take). Authored-wins, the identity tier and the save
 * gate all compare addresses this way.
 *
 * @since 0.1.0
 * @category addressing
 */
export const entryAddress = (spec: Pick<MemoryRoutingSpec, "keys">, section: string, key: string): string =>
  placementKey(background(section, isContentKey(key) ? key : foldLabel(spec, section, key)?.key ?? key))

/**
 * Which rule gave `placement` its key for `record` under `spec`: `content` when it is the record's
 * content key; `canonical` or `alias` when it is the declared key the record's label folds to;
 * `statement` when it is the single-valued key the content states ({@link statedKeyOf}); `label`
 * otherwise (the slugified label, or a name the spec chose).
 *
 * @since 0.1.0
 * @category addressing
 */
export const keySourceOf = (
  spec: Pick<MemoryRoutingSpec, "keys">,
  record: Pick<RoutableRecord, "label" | "content">,
  placement: Placement
): KeySource => {
  if (placement.key === contentKey(record.content)) return "content"
  const folded = record.label === undefined ? undefined : foldLabel(spec, placement.section, record.label)
  if (folded !== undefined && folded.key === placement.key && folded.keySource !== "label") return folded.keySource
  const stated = statedKeyOf(spec, record.content)
  if (stated !== undefined && stated.section === placement.section && stated.key === placement.key) return "statement"
  return "label"
}

/**
 * A background placement at `(section, key)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const background = (section: string, key: string): Placement => ({ primitive: "background", section, key })

/**
 * The result of evaluating a spec for one record: routed to a declared section, or declined —
 * by the spec (`spec-declined`) or because the section it named is not declared
 * (`undeclared-section`, with the placement it named).
 *
 * @since 0.1.0
 * @category models
 */
export type RouteEvaluation =
  | {
    readonly _tag: "Routed"
    readonly placement: Placement
    readonly placementKey: string
    readonly keySource: KeySource
    readonly tier: PromotionTier
  }
  | { readonly _tag: "Declined"; readonly reason: "spec-declined"; readonly placement: null }
  | {
    readonly _tag: "Declined"
    readonly reason: "undeclared-section"
    readonly placement: Placement
    readonly placementKey: string
    readonly keySource: KeySource
  }

/**
 * The placement with its key folded through the spec's declared vocabulary for its section: a
 * key the spec declares as an alias becomes its canonical key; a content key, or a name the spec
 * does not declare, is kept as it is.
 */
const canonicalPlacement = (spec: Pick<MemoryRoutingSpec, "keys">, placement: Placement): Placement => {
  if (spec.keys === undefined || isContentKey(placement.key)) return placement
  const folded = vocabularyIndex(spec.keys).get(placement.section)?.get(slugify(placement.key))
  return folded === undefined || folded.key === placement.key ? placement : { ...placement, key: folded.key }
}

/** What a spec's `route` returned, or the failure it threw as an {@link InvalidPlacement}. */
const runRoute = (
  record: RoutableRecord,
  ctx: RoutingContext,
  spec: MemoryRoutingSpec
): Either.Either<unknown, InvalidPlacement> => {
  try {
    return Either.right(spec.route(record, ctx))
  } catch (error) {
    return Either.left(
      error instanceof InvalidPlacement
        ? error
        : new InvalidPlacement({
          specKey: spec.key,
          problem: `route threw: ${error instanceof Error ? error.message : String(error)}`
        })
    )
  }
}

/**
 * Evaluates `spec` for `record` in `ctx`. Pure and total: it may run at save time, in recall, in
 * previews. The key the spec returns is folded through the keys it declares (an alias becomes its
 * canonical key), so the save gate, the promotion row and composition compare canonical keys
 * whether or not the spec's `route` folded the label itself. A spec whose `route` returns a
 * malformed placement, or throws, gives {@link InvalidPlacement} on the left: a bug in the spec,
 * which callers report as a typed failure.
 *
 * @since 0.1.0
 * @category routing
 */
export const evaluateRoute = (
  record: RoutableRecord,
  ctx: RoutingContext,
  spec: MemoryRoutingSpec
): Either.Either<RouteEvaluation, InvalidPlacement> =>
  Either.flatMap(runRoute(record, ctx, spec), (routed): Either.Either<RouteEvaluation, InvalidPlacement> => {
    if (routed === null || routed === undefined) {
      return Either.right({ _tag: "Declined", reason: "spec-declined", placement: null })
    }
    return Either.map(validatePlacement(routed, spec.key), (valid): RouteEvaluation => {
      const placement = canonicalPlacement(spec, valid)
      const address = placementKey(placement)
      const keySource = keySourceOf(spec, record, placement)
      const section = ctx.sections.find((declared) => declared.id === placement.section)
      return section === undefined
        ? { _tag: "Declined", reason: "undeclared-section", placement, placementKey: address, keySource }
        : { _tag: "Routed", placement, placementKey: address, keySource, tier: section.promotion }
    })
  })

/**
 * The promotion row fields for an evaluation, as committed at `promotedAt`. An undeclared section
 * keeps its placement (it composes if the section is declared later); a declined record stores
 * no placement.
 *
 * @since 0.1.0
 * @category routing
 */
export const toPromotionDecision = (
  evaluation: RouteEvaluation,
  spec: Pick<MemoryRoutingSpec, "key" | "version">,
  promotedAt: DateTime.Utc
): PromotionDecision => {
  const common = { specKey: spec.key, specVersion: spec.version, promotedAt }
  switch (evaluation._tag) {
    case "Routed":
      return {
        ...common,
        placement: evaluation.placement,
        placementKey: evaluation.placementKey,
        keySource: evaluation.keySource,
        tier: evaluation.tier
      }
    case "Declined":
      return evaluation.reason === "spec-declined"
        ? { ...common, placement: null, placementKey: null, keySource: null, tier: null }
        : {
          ...common,
          placement: evaluation.placement,
          placementKey: evaluation.placementKey,
          keySource: evaluation.keySource,
          tier: null
        }
  }
}

/**
 * Finalize hook that keeps the order it is given: composed entries oldest first, so a new
 * memory appends below the ones already in the prompt.
 *
 * @since 0.1.0
 * @category combinators
 */
export const finalizeOldestFirst = (composed: ReadonlyArray<PlacedRecord>): OverlayPlan => ({
  order: composed.map((placed) => placed.record.id)
})

/**
 * What an asynchronous classifier may add to a record before routing: tags, and nothing else.
 * Tags that are not valid tags (empty, too long, multi-line) are dropped.
 *
 * @since 0.1.0
 * @category models
 */
export interface AdvisorySignals {
  readonly tags: ReadonlyArray<string>
}

/**
 * One record routed after classification: the signals that were applied and the evaluation.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClassifiedRoute {
  readonly recordId: string
  readonly signals: AdvisorySignals
  readonly evaluation: RouteEvaluation
}

const isTag = onFirstCall(() => Schema.is(Tag))

/**
 * Runs `classify` over a batch of records, then routes each record with the classifier's tags
 * added to its own. The classifier returns one {@link AdvisorySignals} (or `undefined`) per
 * record, by position; it can never produce a placement, only tags the spec may read. A record
 * the spec cannot place fails the batch with {@link InvalidPlacement}.
 *
 * No preset uses this: addresses computed at save time or in recall have no classifier tags, so
 * a spec that depends on them would commit a different address than the one the save gate saw.
 *
 * @since 0.1.0
 * @category routing
 */
export const classifyThenRoute = <E, R>(
  records: ReadonlyArray<RoutableRecord>,
  ctx: RoutingContext,
  spec: MemoryRoutingSpec,
  classify: (records: ReadonlyArray<RoutableRecord>) => Effect.Effect<ReadonlyArray<AdvisorySignals | undefined>, E, R>
): Effect.Effect<ReadonlyArray<ClassifiedRoute>, E | InvalidPlacement, R> =>
  Effect.flatMap(classify(records), (signals) =>
    Either.all(records.map((record, index) => {
      const offered = signals[index]?.tags ?? []
      const added = [...new Set(offered.filter((tag) => isTag(tag) && !record.tags.includes(tag)))]
      const classified: RoutableRecord = added.length === 0
        ? record
        : { ...pickRoutable(record), tags: [...record.tags, ...added] }
      return Either.map(evaluateRoute(classified, ctx, spec), (evaluation): ClassifiedRoute => ({
        recordId: record.id,
        signals: { tags: added },
        evaluation
      }))
    })))

const pickRoutable = (record: RoutableRecord): RoutableRecord => ({
  id: record.id,
  content: record.content,
  kind: record.kind,
  ...(record.label !== undefined ? { label: record.label } : {}),
  tags: record.tags,
  scope: record.scope,
  sourceType: record.sourceType,
  deliveryPolicy: record.deliveryPolicy,
  createdAt: record.createdAt
})
