/**
 * Recursively freezes plain data (objects and arrays). Values reachable from a Background are
 * scalars, arrays and plain objects, so there are no cycles to guard against.
 *
 * @internal
 */
export const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) {
      deepFreeze((value as Record<string, unknown>)[key])
    }
    Object.freeze(value)
  }
  return value
}
