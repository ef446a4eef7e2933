/**
 * FNV-1a, 64-bit, over the UTF-8 bytes of a string, as 16 lower-case hex digits. Stable across
 * platforms and versions: content-derived placement keys are persisted, so this must never change.
 *
 * @internal
 */
const encoder = new TextEncoder()

export const fnv1a64 = (text: string): string => {
  // The 64-bit state as two unsigned 32-bit halves; offset basis 0xcbf29ce484222325.
  let hi = 0xcbf29ce4
  let lo = 0x84222325
  for (const byte of encoder.encode(text)) {
    lo = (lo ^ byte) >>> 0
    // state * 0x100000001b3 = state * 0x1b3 + (state << 40), modulo 2^64.
    const product = lo * 0x1b3
    const carry = Math.floor(product / 0x1_0000_0000)
    hi = (Math.imul(hi, 0x1b3) + carry + (lo << 8)) >>> 0
    lo = product >>> 0
  }
  return hi.toString(16).padStart(8, "0") + lo.toString(16).padStart(8, "0")
}
