/**
 * A least-recently-used cache of numbers keyed by strings, bounded by the total length of its
 * keys: a hit moves the key to the newest end, a write past the bound evicts from the oldest end.
 * A key longer than the whole bound is never stored. A JavaScript `Map` hashes a string key by its
 * content (and keeps the hash on the string), so the key is its own content hash: no digest is
 * computed.
 *
 * @internal
 */
export interface BoundedCache {
  readonly get: (key: string) => number | undefined
  readonly set: (key: string, value: number) => void
  /** Total UTF-16 code units of the keys held (never above the bound). */
  readonly size: () => number
  readonly entries: () => number
}

export const make = (maxKeyChars: number): BoundedCache => {
  const bound = Math.max(0, Math.floor(maxKeyChars))
  const map = new Map<string, number>()
  let chars = 0
  return {
    get: (key) => {
      const value = map.get(key)
      if (value !== undefined) {
        map.delete(key)
        map.set(key, value)
      }
      return value
    },
    set: (key, value) => {
      if (key.length > bound) return
      if (map.delete(key)) chars -= key.length
      while (chars + key.length > bound) {
        const oldest = map.keys().next().value as string
        map.delete(oldest)
        chars -= oldest.length
      }
      map.set(key, value)
      chars += key.length
    },
    size: () => chars,
    entries: () => map.size
  }
}
