/**
 * The check of `Routing.Placement`, written out for the paths that run it once per placed record
 * (a spec's placements, promotion rows before a commit): the same rules as `Schema.is(Placement)`
 * for a fraction of its cost. Callers send whatever it refuses to the schema, which names the problem.
 */

/** The fields of a placement, as the check accepts them. */
interface PlacementShape {
  readonly primitive: "background"
  readonly section: string
  readonly key: string
}

export const isPlacement = (u: unknown): u is PlacementShape => {
  if (typeof u !== "object" || u === null) return false
  const p = u as { readonly primitive?: unknown; readonly section?: unknown; readonly key?: unknown }
  return p.primitive === "background" && typeof p.section === "string" && p.section.length > 0 &&
    typeof p.key === "string" && p.key.length > 0
}
