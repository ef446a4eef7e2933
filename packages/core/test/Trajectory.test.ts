import { describe, expect, it } from "@effect/vitest"
import { SessionStore, Trajectory } from "@engram/core"
import { DateTime, Either } from "effect"
import * as fc from "fast-check"
import { createHash } from "node:crypto"

const nodeSha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

describe("Trajectory", () => {
  it("contentHash is SHA-256 of the UTF-8 text (known vectors)", () => {
    expect(Trajectory.contentHash("")).toBe("sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    expect(Trajectory.contentHash("abc")).toBe(
      "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    )
  })

  it("contentHash agrees with node:crypto on any text, at every padding boundary", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: "grapheme", maxLength: 300 }), fc.string({ minLength: 50, maxLength: 140 })),
        (text) => Trajectory.contentHash(text) === `sha256:${nodeSha256(text)}`
      ),
      { numRuns: 300 }
    )
  })

  it("a message entry decodes back to its message, and a tampered body is refused", () => {
    const message = new SessionStore.OperatorMessage({ text: "hello", at: DateTime.unsafeMake(0) })
    const entry = Trajectory.messageEntry(3, message)
    expect(Either.getOrThrow(Trajectory.messageOf(entry))).toEqual(message)
    expect(Either.isRight(Trajectory.fromColumns(Trajectory.toColumns(entry)))).toBe(true)
    const tampered = { ...Trajectory.toColumns(entry), body: entry.body.replace("hello", "hullo") }
    expect(Either.getLeft(Trajectory.fromColumns(tampered))._tag).toBe("Some")
    expect(Trajectory.invalidEntry({ ...entry, body: "{}" })).toContain("is not the SHA-256 of its body")
  })
})
