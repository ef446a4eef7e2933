/**
 * What a caller bound to some scopes (a scoped API token, an MCP server serving one scope) may be
 * shown — one rule for every transport (decision 0048): **every fragment, id and link a response
 * carries belongs to the caller's scopes**, checked on what the response holds, not on how it was
 * found.
 *
 * - A memory id belongs to the scopes that hold it: the record's scope, or its tombstone's once it
 *   was forgotten. An id no store holds anywhere belongs to no scope.
 * - A record or tombstone is shown with its links (`supersedes`, `supersededBy`, the successor id
 *   in `invalidationReason`) to records of other scopes removed: the caller sees that its record
 *   was superseded, never by what.
 * - A stored model call is shown only when its projection read the caller's scopes alone, every
 *   memory whose text it carries (prefix fragments, projected sections) is held by those scopes,
 *   and no id it refers to (redactions, shed and withheld lines) belongs to another scope. The
 *   prefix is part of the call: a prefix composed from another scope's memories hides the call.
 *
 * Handlers find records by whatever route they take and pass what they are about to answer
 * through these functions.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import { Tombstone } from "./MemoryForget.js"
import { MemoryRecord, type Scope } from "./MemoryRecord.js"
import { MemoryStore } from "./MemoryStore.js"
import type { MemoryStoreFailure } from "./MemoryStoreError.js"
import type { PromptSnapshot } from "./PromptSnapshot.js"

/**
 * Where a set of memory ids belongs, seen from some scopes: `held` ids are stored or forgotten in
 * them, `foreign` ids in another scope; an id in neither belongs to no scope.
 *
 * @since 0.1.0
 * @category models
 */
export interface Holdings {
  readonly scopes: ReadonlyArray<Scope>
  readonly held: ReadonlySet<string>
  readonly foreign: ReadonlySet<string>
}

/**
 * Where each of `ids` belongs, seen from `scopes`: two reads within the scopes (records, then
 * tombstones), and two without them for the ids left over.
 *
 * @since 0.1.0
 * @category constructors
 */
export const holdings = (
  scopes: ReadonlyArray<Scope>,
  ids: Iterable<string>
): Effect.Effect<Holdings, MemoryStoreFailure, MemoryStore> =>
  Effect.gen(function*() {
    const wanted = [...new Set(ids)]
    if (wanted.length === 0) return { scopes, held: new Set(), foreign: new Set() }
    const store = yield* MemoryStore
    const held = new Set<string>()
    for (const record of (yield* store.get(wanted, { scopes })).records) held.add(record.id)
    const notStored = wanted.filter((id) => !held.has(id))
    if (notStored.length > 0) {
      for (const grave of yield* store.tombstones({ ids: notStored, scopes })) held.add(grave.memoryId)
    }
    const rest = wanted.filter((id) => !held.has(id))
    const foreign = new Set<string>()
    if (rest.length > 0) {
      for (const record of (yield* store.get(rest)).records) foreign.add(record.id)
      const unseen = rest.filter((id) => !foreign.has(id))
      if (unseen.length > 0) {
        for (const grave of yield* store.tombstones({ ids: unseen })) foreign.add(grave.memoryId)
      }
    }
    return { scopes, held, foreign }
  })

/**
 * The ids a record or tombstone links to.
 *
 * @since 0.1.0
 * @category accessors
 */
export const linksOf = (
  item: { readonly supersedes?: string | undefined; readonly supersededBy?: string | undefined }
): ReadonlyArray<string> => [item.supersedes, item.supersededBy].filter((id): id is string => id !== undefined)

const SUPERSEDED_PREFIX = "superseded_by:"

/**
 * The record as the holders' caller sees it: links to another scope's records removed, and a
 * supersession reason that names such a successor reduced to `superseded`. Returns the record
 * itself when it carries nothing foreign.
 *
 * @since 0.1.0
 * @category views
 */
export const record = (item: MemoryRecord, seen: Holdings): MemoryRecord => {
  const foreignBy = item.supersededBy !== undefined && seen.foreign.has(item.supersededBy)
  const foreignFrom = item.supersedes !== undefined && seen.foreign.has(item.supersedes)
  const reason = item.invalidationReason
  const foreignReason = reason !== undefined && reason.startsWith(SUPERSEDED_PREFIX) &&
    seen.foreign.has(reason.slice(SUPERSEDED_PREFIX.length))
  if (!foreignBy && !foreignFrom && !foreignReason) return item
  const { invalidationReason: _reason, supersededBy: _by, supersedes: _from, ...kept } = item
  return new MemoryRecord({
    ...kept,
    ...(!foreignBy && item.supersededBy !== undefined ? { supersededBy: item.supersededBy } : {}),
    ...(!foreignFrom && item.supersedes !== undefined ? { supersedes: item.supersedes } : {}),
    ...(reason !== undefined ? { invalidationReason: foreignReason ? "superseded" : reason } : {})
  }, { disableValidation: true })
}

/**
 * The tombstone as the holders' caller sees it: links to another scope's records removed.
 *
 * @since 0.1.0
 * @category views
 */
export const tombstone = (grave: Tombstone, seen: Holdings): Tombstone => {
  const foreignBy = grave.supersededBy !== undefined && seen.foreign.has(grave.supersededBy)
  const foreignFrom = grave.supersedes !== undefined && seen.foreign.has(grave.supersedes)
  if (!foreignBy && !foreignFrom) return grave
  const { supersededBy: _by, supersedes: _from, ...kept } = grave
  return new Tombstone({
    ...kept,
    ...(!foreignBy && grave.supersededBy !== undefined ? { supersededBy: grave.supersededBy } : {}),
    ...(!foreignFrom && grave.supersedes !== undefined ? { supersedes: grave.supersedes } : {})
  }, { disableValidation: true })
}

/** Items of `scopes` through `view`, with one lookup for all their links. */
const seenFrom = <A extends { readonly scope: Scope } & Parameters<typeof linksOf>[0]>(
  scopes: ReadonlyArray<Scope>,
  items: ReadonlyArray<A>,
  view: (item: A, seen: Holdings) => A
): Effect.Effect<ReadonlyArray<A>, MemoryStoreFailure, MemoryStore> =>
  Effect.suspend(() => {
    const shown = items.filter((item) => scopes.includes(item.scope))
    const links = shown.flatMap(linksOf)
    // Nothing links anywhere (a record just created, say): no lookup, and every item is as stored.
    return links.length === 0
      ? Effect.succeed(shown)
      : Effect.map(holdings(scopes, links), (seen) => shown.map((item) => view(item, seen)))
  })

/**
 * Records as a caller of `scopes` sees them: those of other scopes left out, the rest through
 * {@link record}, with one lookup for all their links.
 *
 * @since 0.1.0
 * @category views
 */
export const records = (
  scopes: ReadonlyArray<Scope>,
  items: ReadonlyArray<MemoryRecord>
): Effect.Effect<ReadonlyArray<MemoryRecord>, MemoryStoreFailure, MemoryStore> => seenFrom(scopes, items, record)

/**
 * Tombstones as a caller of `scopes` sees them: those of other scopes left out, the rest through
 * {@link tombstone}.
 *
 * @since 0.1.0
 * @category views
 */
export const tombstones = (
  scopes: ReadonlyArray<Scope>,
  graves: ReadonlyArray<Tombstone>
): Effect.Effect<ReadonlyArray<Tombstone>, MemoryStoreFailure, MemoryStore> => seenFrom(scopes, graves, tombstone)

/**
 * The memory ids a stored call holds: `carried`, whose text reached the model (prefix fragments
 * from memory, projected sections), and `referenced`, named without their text (redacted
 * memories; the refs of shed and withheld lines, which name a memory, a session or a skill).
 *
 * @since 0.1.0
 * @category accessors
 */
export const idsOfSnapshot = (
  snapshot: PromptSnapshot
): { readonly carried: ReadonlyArray<string>; readonly referenced: ReadonlyArray<string> } => ({
  carried: [
    ...snapshot.prefix.sections.flatMap((section) => section.fragments.flatMap((fragment) => fragment.memoryIds)),
    ...snapshot.projection.sections.flatMap((section) => section.memoryIds)
  ],
  referenced: [
    ...snapshot.redacted,
    ...snapshot.projection.shed.map((item) => item.ref),
    ...snapshot.projection.withheld.map((item) => item.ref)
  ]
})

/**
 * Whether a stored call may be shown to the holders' caller (see the module description). A call
 * whose producer did not record the scopes it read is never shown: fail closed.
 *
 * @since 0.1.0
 * @category predicates
 */
export const snapshotShown = (snapshot: PromptSnapshot, seen: Holdings): boolean => {
  if (snapshot.scopes === null || !snapshot.scopes.every((scope) => seen.scopes.includes(scope))) return false
  const { carried, referenced } = idsOfSnapshot(snapshot)
  return carried.every((id) => seen.held.has(id)) && referenced.every((id) => !seen.foreign.has(id))
}

/**
 * Whether a session may be shown to a caller of `scopes`: it has stored calls, and every one of
 * them may be shown ({@link snapshotShown}). Anything else is "not found".
 *
 * @since 0.1.0
 * @category predicates
 */
export const sessionShown = (
  scopes: ReadonlyArray<Scope>,
  snapshots: ReadonlyArray<PromptSnapshot>
): Effect.Effect<boolean, MemoryStoreFailure, MemoryStore> => {
  if (snapshots.length === 0) return Effect.succeed(false)
  const ids = snapshots.flatMap((snapshot) => {
    const { carried, referenced } = idsOfSnapshot(snapshot)
    return [...carried, ...referenced]
  })
  return Effect.map(holdings(scopes, ids), (seen) => snapshots.every((snapshot) => snapshotShown(snapshot, seen)))
}
