/**
 * Forgetting: the one operation that removes a memory for good. Everything else in the store is
 * create-only (review, supersession and expiry change state, never content); `MemoryStore.forget`
 * deletes the record, its search-index entries and its promotion rows in one transaction, and
 * leaves a {@link Tombstone} saying who forgot which id, in which scope and when — never what it
 * said.
 *
 * A supersession chain that passed through a forgotten record stays readable: the records on
 * either side keep their `supersedes` / `supersededBy` ids, and the tombstone keeps the links the
 * forgotten record had, so {@link supersessionChain} can walk across it.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { onFirstCall } from "./internal/onFirstCall.js"
import { MemoryId, type MemoryRecord, Scope } from "./MemoryRecord.js"
import { type InvalidMemoryQuery, MemoryStoreFailure } from "./MemoryStoreError.js"
import { decodeQuery } from "./MemoryWrite.js"
import { PromotionStore, type Service as PromotionStoreService } from "./PromotionStore.js"
import { type Service as TelemetryStoreService, TelemetryStore } from "./TelemetryStore.js"
import type { ForgottenText } from "./Trajectory.js"

/**
 * Who asked to forget: an operator name, a token label, `cli`, `mcp`… One line, 1-200 characters.
 *
 * @since 0.1.0
 * @category models
 */
export const ForgottenBy = Schema.String.pipe(
  Schema.filter((s) =>
    s.trim().length === 0 || s.length > 200 || /[\p{Cc}\u2028\u2029]/u.test(s)
      ? "who forgot must be one line of 1-200 characters"
      : undefined
  ),
  Schema.annotations({ identifier: "ForgottenBy" })
)

/**
 * What to forget: records by id (optionally only those inside `scopes`), or every record of one
 * scope.
 *
 * @since 0.1.0
 * @category models
 */
export const ForgetTarget = Schema.Union(
  Schema.Struct({
    ids: Schema.Array(MemoryId).pipe(Schema.maxItems(10_000, { message: () => "forget at most 10000 ids at once" })),
    scopes: Schema.optional(Schema.Array(Scope))
  }),
  Schema.Struct({ scope: Scope })
).annotations({ identifier: "ForgetTarget" })
/** @since 0.1.0 @category models */
export type ForgetTarget = typeof ForgetTarget.Type

/**
 * The trace a forgotten record leaves: its id, its scope, when and by whom it was forgotten, and
 * its supersession links. No content, label, tags or kind.
 *
 * @since 0.1.0
 * @category models
 */
export class Tombstone extends Schema.Class<Tombstone>("Tombstone")({
  memoryId: MemoryId,
  scope: Scope,
  forgottenAt: Schema.DateTimeUtc,
  forgottenBy: ForgottenBy,
  supersedes: Schema.optional(MemoryId),
  supersededBy: Schema.optional(MemoryId)
}) {}

/**
 * What a forget did: one tombstone per record removed, in id order. Ids that named nothing (or
 * a record outside the allowed scopes) are simply absent: forgetting is idempotent.
 *
 * @since 0.1.0
 * @category models
 */
export interface ForgetResult {
  readonly tombstones: ReadonlyArray<Tombstone>
}

/**
 * Which tombstones to read back: by forgotten id and/or by scope.
 *
 * @since 0.1.0
 * @category models
 */
export interface TombstoneQuery {
  readonly ids?: ReadonlyArray<MemoryId> | undefined
  readonly scopes?: ReadonlyArray<Scope> | undefined
}

/**
 * The tombstone of a record (or of a stored row's id, scope and links, `null` meaning none),
 * forgotten at `at` by `by`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const tombstoneOf = (
  record: {
    readonly id: string
    readonly scope: string
    readonly supersedes?: string | null | undefined
    readonly supersededBy?: string | null | undefined
  },
  at: DateTime.Utc,
  by: string
): Tombstone =>
  new Tombstone({
    memoryId: record.id,
    scope: record.scope,
    forgottenAt: at,
    forgottenBy: by,
    ...(record.supersedes != null ? { supersedes: record.supersedes } : {}),
    ...(record.supersededBy != null ? { supersededBy: record.supersededBy } : {})
  }, { disableValidation: true })

/**
 * True when a record falls under the target (`ids` with optional `scopes`, or one `scope`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const targets = (target: ForgetTarget, record: MemoryRecord): boolean =>
  "scope" in target
    ? record.scope === target.scope
    : target.ids.includes(record.id) && (target.scopes === undefined || target.scopes.includes(record.scope))

/**
 * The JSON-safe stored form of a tombstone (ISO timestamp), as SQL backends keep it.
 *
 * @since 0.1.0
 * @category encoding
 */
export const tombstoneRow = (tombstone: Tombstone) => ({
  memory_id: tombstone.memoryId,
  scope: tombstone.scope,
  forgotten_at: DateTime.toEpochMillis(tombstone.forgottenAt),
  forgotten_by: tombstone.forgottenBy,
  supersedes: tombstone.supersedes ?? null,
  superseded_by: tombstone.supersededBy ?? null
})

/**
 * Reads a stored tombstone row back (the inverse of {@link tombstoneRow}); `undefined` for a row
 * that does not decode.
 *
 * @since 0.1.0
 * @category encoding
 */
export const fromTombstoneRow = (row: Record<string, unknown>): Tombstone | undefined => {
  const decoded = decodeTombstone({
    memoryId: row.memory_id,
    scope: row.scope,
    forgottenAt: new Date(Number(row.forgotten_at)).toISOString(),
    forgottenBy: row.forgotten_by,
    ...(row.supersedes != null ? { supersedes: row.supersedes } : {}),
    ...(row.superseded_by != null ? { supersededBy: row.superseded_by } : {})
  })
  return decoded._tag === "Right" ? decoded.right : undefined
}

const decodeTombstone = onFirstCall(() => Schema.decodeUnknownEither(Tombstone))

/**
 * Orders tombstones by forgotten id, then time.
 *
 * @since 0.1.0
 * @category ordering
 */
export const compareTombstones = (a: Tombstone, b: Tombstone): number =>
  (a.memoryId < b.memoryId ? -1 : a.memoryId > b.memoryId ? 1 : 0) ||
  DateTime.toEpochMillis(a.forgottenAt) - DateTime.toEpochMillis(b.forgottenAt)

/**
 * One link of a supersession chain: a record still stored, or the tombstone of one forgotten.
 *
 * @since 0.1.0
 * @category models
 */
export type ChainLink =
  | { readonly _tag: "Record"; readonly record: MemoryRecord }
  | { readonly _tag: "Forgotten"; readonly tombstone: Tombstone }
  | { readonly _tag: "Missing"; readonly id: MemoryId }

/**
 * The supersession chain through `id`, oldest first: follows `supersedes` back and `supersededBy`
 * forward, through records and tombstones alike (`lookup` answers both). A link neither stored nor
 * tombstoned ends the walk in that direction as `Missing`. Pure: callers fetch.
 *
 * @since 0.1.0
 * @category history
 */
export const supersessionChain = (
  id: MemoryId,
  lookup: (id: MemoryId) => ChainLink
): ReadonlyArray<ChainLink> => {
  const links = (link: ChainLink): { readonly back?: MemoryId | undefined; readonly forward?: MemoryId | undefined } =>
    link._tag === "Record"
      ? { back: link.record.supersedes, forward: link.record.supersededBy }
      : link._tag === "Forgotten"
      ? { back: link.tombstone.supersedes, forward: link.tombstone.supersededBy }
      : {}
  const start = lookup(id)
  const seen = new Set<string>([id])
  // The links met walking one way from `start`, nearest first; `seen` (shared by both walks) ends a cycle.
  const walk = (direction: "back" | "forward"): Array<ChainLink> => {
    const walked: Array<ChainLink> = []
    for (let next = links(start)[direction]; next !== undefined && !seen.has(next);) {
      seen.add(next)
      const link = lookup(next)
      walked.push(link)
      next = links(link)[direction]
    }
    return walked
  }
  const before = walk("back").reverse()
  return [...before, start, ...walk("forward")]
}

const ForgetRequest = Schema.Struct({ target: ForgetTarget, by: ForgottenBy })

/**
 * Checks a forget request before anything is deleted, failing with `InvalidMemoryQuery`.
 * Backends call this first.
 *
 * @since 0.1.0
 * @category validation
 */
export const decodeForget = (
  target: unknown,
  by: unknown
): Effect.Effect<typeof ForgetRequest.Type, InvalidMemoryQuery> => decodeQuery(ForgetRequest, { target, by })

/**
 * The stores a memory store's `forget` must reach to be complete: the promotion rows of a
 * forgotten record and its text in prompt snapshots and the trajectory. A store takes them when it
 * is built ({@link cascade}), so its layer's type names them and `forget` itself needs nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cascade {
  readonly promotions: PromotionStoreService
  readonly telemetry: TelemetryStoreService
}

/**
 * The {@link Cascade} of the stores in context: what a memory store's constructor reads once.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const cascade: Effect.Effect<Cascade, never, PromotionStore | TelemetryStore> = Effect.all({
  promotions: PromotionStore,
  telemetry: TelemetryStore
})

/**
 * Forgets what depends on forgotten records: their promotion rows (by `ids`) and their text in
 * the telemetry (`forgotten`, each record's id and content read before deletion; see
 * `TelemetryStore.forgetMemories`). Backends call it inside their forget transaction; a backend
 * that shares one database with those stores therefore forgets all of it atomically. Promotion
 * rows go first: if that store fails, the records are still all there.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const forgetDependents = (
  stores: Cascade,
  ids: ReadonlyArray<MemoryId>,
  forgotten: ReadonlyArray<ForgottenText>
): Effect.Effect<void, MemoryStoreFailure> =>
  Effect.zipRight(
    ids.length === 0 ? Effect.void : Effect.asVoid(stores.promotions.forget(ids)),
    forgotten.length === 0 ? Effect.void : Effect.asVoid(stores.telemetry.forgetMemories(forgotten))
  ).pipe(Effect.mapError((cause) => new MemoryStoreFailure({ operation: "forget", cause })))
