/**
 * Conversation context in the projection: which stored turns are delivered beside a recall hit,
 * where their lines sit and when they are shed. The composer (`internal/projection.ts`) calls
 * {@link arrange} with the recall lines it admitted; the projection layer calls
 * {@link assignNeighbours} on what `MemoryStore.neighbours` read. Pure, and generic over the
 * composer's line type, so this module imports nothing of the composer's.
 */
import type { Place } from "../MemoryQuery.js"
import type { MemoryRecord } from "../MemoryRecord.js"

/**
 * When a neighbour is shed: `before-hits` — before every hit (neighbours take only the budget
 * the hits leave); `with-hit` — just before its own hit, after every weaker hit (a strong hit's
 * context outranks a weak hit). Either way a neighbour is never kept while its own hit is shed,
 * nor while a stronger hit is, unless that hit was too long for the room the composer had left
 * and it filled past it (decision 0222).
 */
export type NeighbourShed = "before-hits" | "with-hit"

/** A neighbour read for the projection, attributed to the hit it is delivered beside. */
export interface Neighbour {
  readonly record: MemoryRecord
  /** The id of the hit it sits next to: the strongest hit within the window of it. */
  readonly of: string
  /** How many turns after its hit it sits (negative: before), in their thread or write order. */
  readonly offset: number
}

const threadKey = (scope: string, thread: string) => `${scope}\u0000${thread}`

/**
 * Attributes each record read around the hits to one hit: the strongest (earliest in `hits`) of
 * the same scope and thread within `window` turns of it, by the places the read gave
 * (`MemoryStore.NeighbourResult`: a written position, or a place in the scope's write order). A
 * record that is itself a hit, has no place, or is near no hit is left out, and each record is
 * attributed once. Ordered by the hit's rank, then conversation order.
 */
export const assignNeighbours = (
  hits: ReadonlyArray<{ readonly record: MemoryRecord }>,
  records: ReadonlyArray<MemoryRecord>,
  places: ReadonlyArray<Place>,
  window: number
): Array<Neighbour> => {
  const placeOf = new Map(places.map((place) => [place.id, place]))
  const hitIds = new Set(hits.map((hit) => hit.record.id))
  const byThread = new Map<string, Array<{ readonly rank: number; readonly turn: number; readonly id: string }>>()
  hits.forEach((hit, rank) => {
    const position = placeOf.get(hit.record.id)
    if (position === undefined) return
    const key = threadKey(hit.record.scope, position.thread)
    let list = byThread.get(key)
    if (list === undefined) byThread.set(key, list = [])
    list.push({ rank, turn: position.turn, id: hit.record.id })
  })
  const seen = new Set<string>()
  const assigned: Array<Neighbour & { readonly rank: number; readonly index: number }> = []
  records.forEach((record, index) => {
    const position = placeOf.get(record.id)
    if (position === undefined || hitIds.has(record.id) || seen.has(record.id)) return
    let best: { readonly rank: number; readonly turn: number; readonly id: string } | undefined
    for (const hit of byThread.get(threadKey(record.scope, position.thread)) ?? []) {
      if (Math.abs(hit.turn - position.turn) <= window && (best === undefined || hit.rank < best.rank)) best = hit
    }
    if (best === undefined) return
    seen.add(record.id)
    assigned.push({ record, of: best.id, offset: position.turn - best.turn, rank: best.rank, index })
  })
  return assigned
    .sort((a, b) => a.rank - b.rank || a.index - b.index)
    .map(({ of, offset, record }) => ({ record, of, offset }))
}

/** A recall hit's line as the composer admitted it. */
export interface HitLine<L> {
  readonly line: L
  readonly record: MemoryRecord
  readonly score: number
  readonly index: number
}

/** A neighbour's line as the composer admitted it. */
export interface NeighbourLine<L> {
  readonly line: L
  readonly record: MemoryRecord
  readonly of: string
  /** Turns after its hit (negative: before); without it, the difference of the written positions. */
  readonly offset?: number | undefined
}

const turnOf = (record: MemoryRecord): number => record.position?.turn ?? 0

/**
 * The recall section's lines in text order and in shed order (first shed first).
 *
 * Text: hits best first, each with its neighbours around it in conversation order — earlier
 * turns before the hit, later ones (and others of its own turn) after it. A neighbour whose hit
 * is not among `hits` (withheld) is dropped: it has no place and no priority.
 *
 * Shed: hits lowest score first (ties: the later hit first), as without neighbours; a hit's
 * neighbours are shed farthest turn first, and according to `shed` all before any hit
 * (`before-hits`) or each group just before its own hit (`with-hit`).
 */
export const arrange = <L>(
  hits: ReadonlyArray<HitLine<L>>,
  neighbours: ReadonlyArray<NeighbourLine<L>>,
  shed: NeighbourShed
): { readonly text: ReadonlyArray<L>; readonly shedOrder: ReadonlyArray<L> } => {
  const byHit = new Map<string, Array<NeighbourLine<L>>>()
  for (const hit of hits) byHit.set(hit.record.id, [])
  for (const neighbour of neighbours) byHit.get(neighbour.of)?.push(neighbour)
  const offsetOf = (n: NeighbourLine<L>, hit: HitLine<L>) => n.offset ?? turnOf(n.record) - turnOf(hit.record)
  const text: Array<L> = []
  for (const hit of hits) {
    const group = [...byHit.get(hit.record.id)!].sort((a, b) => offsetOf(a, hit) - offsetOf(b, hit))
    for (const n of group) if (offsetOf(n, hit) < 0) text.push(n.line)
    text.push(hit.line)
    for (const n of group) if (offsetOf(n, hit) >= 0) text.push(n.line)
  }
  const hitsFirstShed = [...hits].sort((a, b) => a.score - b.score || b.index - a.index)
  const groupShed = (hit: HitLine<L>): Array<L> => {
    return [...byHit.get(hit.record.id)!]
      .map((n, i) => ({ n, i, distance: Math.abs(offsetOf(n, hit)) }))
      .sort((a, b) => b.distance - a.distance || b.i - a.i)
      .map(({ n }) => n.line)
  }
  const shedOrder: Array<L> = shed === "before-hits"
    ? [...hitsFirstShed.flatMap(groupShed), ...hitsFirstShed.map((hit) => hit.line)]
    : hitsFirstShed.flatMap((hit) => [...groupShed(hit), hit.line])
  return { text, shedOrder }
}
