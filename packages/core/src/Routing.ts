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
import * as Schema from "effect/Schema"
import { type Background, PromotionTier } from "./Background.js"
import { addressTokens } from "./internal/addressTokens.js"
import { deepFreeze } from "./internal/deepFreeze.js"
import { fnv1a64 } from "./internal/fnv1a64.js"
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
 * Where a placement's key came from: `label` when it is a name (normally the record's slugified
 * label) — records with the same name share the address and the newest one holds it; `content`
 * when it was derived from the content, so only the same content shares it and the record is in
 * effect append-only.
 *
 * @since 0.1.0
 * @category models
 */
export const KeySource = Schema.Literal("label", "content")
/** @since 0.1.0 @category models */
export type KeySource = typeof KeySource.Type

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
 *   recall-only). Returning a value that is not a valid {@link Placement} is a bug in the spec
 *   and throws {@link InvalidPlacement}.
 * - `reconcile`: when two records hold one address, `a` (the newer) and `b` (the older), which
 *   one keeps it — `"a"`, `"b"`, or `"both"` to compose them into one entry. Without it, the newest
 *   record wins.
 * - `finalize`: the order of composed entries, given the composed records oldest first.
 * - `renderEntry`: the entry value for a placed record (default: the record's content). It is
 *   rendered on one line whatever it contains.
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryRoutingSpec {
  readonly key: string
  readonly version: string
  readonly route: (record: RoutableRecord, ctx: RoutingContext) => Placement | null | undefined
  readonly reconcile?: ((a: RoutableRecord, b: RoutableRecord) => "a" | "b" | "both") | undefined
  readonly finalize: (composed: ReadonlyArray<PlacedRecord>, ctx: RoutingContext) => OverlayPlan
  readonly renderEntry?: ((placed: PlacedRecord) => string) | undefined
}

/**
 * A spec's `route` returned something that is not a {@link Placement}. This is a bug in the spec
 * — the only failure routing and composition throw.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidPlacement extends Schema.TaggedError<InvalidPlacement>()("InvalidPlacement", {
  specKey: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    return `routing spec "${this.specKey}" produced an invalid placement (a bug in the spec): ${this.problem}`
  }
}

// The same check as `Schema.is(Placement)`, written out: it runs once per placed record.
const isPlacement = (u: unknown): u is Placement => {
  if (typeof u !== "object" || u === null) return false
  const p = u as { readonly primitive?: unknown; readonly section?: unknown; readonly key?: unknown }
  return p.primitive === "background" && typeof p.section === "string" && p.section.length > 0 &&
    typeof p.key === "string" && p.key.length > 0
}
const decodePlacement = Schema.decodeUnknownEither(Placement)

/**
 * Checks a placement produced by a spec (or read from a promotion row), throwing
 * {@link InvalidPlacement} when it is malformed.
 *
 * @since 0.1.0
 * @category validation
 */
export const validatePlacement = (placement: unknown, specKey: string): Placement => {
  if (isPlacement(placement)) return placement
  const decoded = decodePlacement(placement)
  throw new InvalidPlacement({
    specKey,
    problem: decoded._tag === "Left" ? describeParseError(decoded.left) : "not a placement"
  })
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
 * The key a spec normally gives a record: its slugified label, or its content key when it has no
 * label (or one without letters or digits).
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
 * Whether `key` is the record's content-derived key (`content`) or a name (`label`).
 *
 * @since 0.1.0
 * @category addressing
 */
export const keySourceOf = (record: Pick<RoutableRecord, "content">, key: string): KeySource =>
  key === contentKey(record.content) ? "content" : "label"

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
 * Evaluates `spec` for `record` in `ctx`. Pure: it may run at save time, in recall, in previews.
 * Throws {@link InvalidPlacement} only when the spec returns a malformed placement.
 *
 * @since 0.1.0
 * @category routing
 */
export const evaluateRoute = (record: RoutableRecord, ctx: RoutingContext, spec: MemoryRoutingSpec): RouteEvaluation => {
  const routed = spec.route(record, ctx)
  if (routed === null || routed === undefined) return { _tag: "Declined", reason: "spec-declined", placement: null }
  const placement = validatePlacement(routed, spec.key)
  const address = placementKey(placement)
  const keySource = keySourceOf(record, placement.key)
  const section = ctx.sections.find((declared) => declared.id === placement.section)
  return section === undefined
    ? { _tag: "Declined", reason: "undeclared-section", placement, placementKey: address, keySource }
    : { _tag: "Routed", placement, placementKey: address, keySource, tier: section.promotion }
}

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

const isTag = Schema.is(Tag)

/**
 * Runs `classify` over a batch of records, then routes each record with the classifier's tags
 * added to its own. The classifier returns one {@link AdvisorySignals} (or `undefined`) per
 * record, by position; it can never produce a placement, only tags the spec may read.
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
): Effect.Effect<ReadonlyArray<ClassifiedRoute>, E, R> =>
  Effect.map(classify(records), (signals) =>
    records.map((record, index) => {
      const offered = signals[index]?.tags ?? []
      const added = [...new Set(offered.filter((tag) => isTag(tag) && !record.tags.includes(tag)))]
      const classified: RoutableRecord = added.length === 0 ? record : { ...pickRoutable(record), tags: [...record.tags, ...added] }
      return {
        recordId: record.id,
        signals: { tags: added },
        evaluation: evaluateRoute(classified, ctx, spec)
      }
    }))

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
