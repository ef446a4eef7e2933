import { describe, expect, it } from "@effect/vitest"
import { Sha256 } from "@engram/core"
import * as fc from "fast-check"
import { createHash } from "node:crypto"

// An independent implementation to check against (the platform's), used only here.
const reference = (input: string | Uint8Array) => createHash("sha256").update(input).digest("hex")

describe("Sha256", () => {
  it("hashes the FIPS 180-4 example messages", () => {
    expect(Sha256.hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    expect(Sha256.hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    expect(Sha256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    )
    expect(Sha256.hex("a".repeat(1_000_000))).toBe("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  })

  it("hashes text as its UTF-8 bytes", () => {
    const text = "résumé · 東京 · 🧠"
    expect(Sha256.hex(text)).toBe(Sha256.hex(new TextEncoder().encode(text)))
    expect(Sha256.hex(text)).toBe(reference(Buffer.from(text, "utf8")))
  })

  it("agrees with node:crypto on any text and any bytes, at every padding boundary", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: "grapheme", maxLength: 300 }), fc.string({ minLength: 50, maxLength: 140 })),
        (text) => Sha256.hex(text) === reference(text)
      ),
      { numRuns: 300 }
    )
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => Sha256.hex(bytes) === reference(bytes)),
      { numRuns: 200 }
    )
  })

  it("a hasher fed in pieces gives the digest of the joined input", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "grapheme", maxLength: 80 }), { maxLength: 12 }), (pieces) => {
        const hasher = Sha256.hasher()
        for (const piece of pieces) hasher.update(piece)
        return hasher.hex() === Sha256.hex(pieces.join(""))
      }),
      { numRuns: 200 }
    )
    expect(Sha256.hasher().update("a").update(new TextEncoder().encode("b")).update("c").hex()).toBe(Sha256.hex("abc"))
  })
})
