/**
 * SHA-256, the one hash Engram uses: content addresses in the trajectory, stored token secrets,
 * PostgreSQL's stand-in for an over-long lexeme, migration checksums and the legacy-import
 * fingerprint all go through this module.
 *
 * It is `@noble/hashes` (audited, dependency-free, pure JavaScript): synchronous, so a pure
 * function can compute a content address, and the same on Node, Bun, Deno and a browser
 * (decision 0045). Text is hashed as its UTF-8 bytes.
 *
 * @example
 * ```ts
 * import { Sha256 } from "@engram/core"
 *
 * Sha256.hex("abc") // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
 * Sha256.hasher().update("a").update("bc").hex() // the same digest, fed in pieces
 * ```
 *
 * @since 0.1.0
 */
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js"

/**
 * What can be hashed: text (its UTF-8 bytes) or bytes.
 *
 * @since 0.1.0
 * @category models
 */
export type Input = string | Uint8Array

const bytesOf = (input: Input): Uint8Array => (typeof input === "string" ? utf8ToBytes(input) : input)

/**
 * The SHA-256 of `input` as 64 lower-case hex digits.
 *
 * @since 0.1.0
 * @category hashing
 */
export const hex = (input: Input): string => bytesToHex(sha256(bytesOf(input)))

/**
 * A digest fed in pieces: `update` appends to the hashed bytes (and returns the same hasher),
 * `hex` finishes it. `hasher().update(a).update(b).hex()` equals `hex(a + b)`. A hasher is
 * finished once: `update` or `hex` after `hex` throws.
 *
 * @since 0.1.0
 * @category models
 */
export interface Hasher {
  readonly update: (input: Input) => Hasher
  readonly hex: () => string
}

/**
 * A fresh {@link Hasher}, for input too large or too scattered to join into one string first.
 *
 * @since 0.1.0
 * @category hashing
 */
export const hasher = (): Hasher => {
  const state = sha256.create()
  const self: Hasher = {
    update: (input) => {
      state.update(bytesOf(input))
      return self
    },
    hex: () => bytesToHex(state.digest())
  }
  return self
}
