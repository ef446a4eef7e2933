/**
 * A cache of numbers keyed by strings, bounded by the total length of its keys, in two
 * generations (the "hashlru" scheme): new and recently used keys go to the young generation;
 * when it would pass half the bound it becomes the old one, and the previous old generation —
 * keys not used for a whole generation — is dropped at once. A hit in the young generation is one
 * `Map` look-up; an exact LRU moves every hit to the newest end (a delete and a set), which cost
 * twice the look-up on the projection's path, where every line is looked up (issue #25, decision
 * 0122). A key survives while the keys used since its last use total at most half the bound; a
 * key longer than half the bound is never stored.
 *
 * A JavaScript `Map` hashes a string key by its content (and keeps the hash on the string), so the
 * key is its own content hash: no digest is computed.
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
  const half = Math.floor(Math.max(0, Math.floor(maxKeyChars)) / 2)
  let young = new Map<string, number>()
  let old = new Map<string, number>()
  let youngChars = 0
  let oldChars = 0
  // Adds a key the young generation does not hold, swapping generations first when it would overflow.
  const add = (key: string, value: number) => {
    if (youngChars + key.length > half) {
      old = young
      oldChars = youngChars
      young = new Map()
      youngChars = 0
    }
    young.set(key, value)
    youngChars += key.length
  }
  return {
    get: (key) => {
      const value = young.get(key)
      if (value !== undefined) return value
      const aged = old.get(key)
      if (aged !== undefined) {
        old.delete(key)
        oldChars -= key.length
        add(key, aged)
      }
      return aged
    },
    set: (key, value) => {
      if (key.length > half) return
      if (young.has(key)) {
        young.set(key, value)
        return
      }
      if (old.delete(key)) oldChars -= key.length
      add(key, value)
    },
    size: () => youngChars + oldChars,
    entries: () => young.size + old.size
  }
}
