/**
 * The digests databases already hold must not change when the hash implementation does
 * (decision 0045): trajectory content addresses, stored token secrets, PostgreSQL's stand-in for an
 * over-long lexeme and the migration checksum, each against the values the earlier
 * implementations produced (`test/fixtures/storedDigests.json`).
 */
import { describe, expect, it } from "@effect/vitest"
import { Trajectory } from "@engram/core"
import { AccessTokens } from "@engram/server"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import { storeChecksum } from "../packages/cli/src/commands/Migrate.js"
import { lexemeOf } from "../packages/store-pg/src/internal/lexemes.js"

interface Fixture {
  readonly contentHashes: ReadonlyArray<{ readonly text: string; readonly hash: string }>
  readonly trajectoryEntries: ReadonlyArray<unknown>
  readonly tokenSecrets: ReadonlyArray<{ readonly secret: string; readonly hash: string }>
  readonly longLexemes: ReadonlyArray<{ readonly repeat: string; readonly times: number; readonly lexeme: string }>
  readonly storeChecksums: ReadonlyArray<
    { readonly records: string; readonly sessions: string; readonly markers: string; readonly checksum: string }
  >
}

const fixture: Fixture = JSON.parse(
  NodeFs.readFileSync(new URL("./fixtures/storedDigests.json", import.meta.url), "utf8")
)

describe("stored digests stay what they were", () => {
  it("content addresses", () => {
    expect(fixture.contentHashes.map(({ text }) => Trajectory.contentHash(text))).toEqual(
      fixture.contentHashes.map(({ hash }) => hash)
    )
  })

  it("stored trajectory entries still verify against their bodies", () => {
    expect(fixture.trajectoryEntries).toHaveLength(2)
    for (const stored of fixture.trajectoryEntries) {
      const entry = Trajectory.decodeStoredEntry(stored)
      expect(entry._tag).toBe("Right")
      if (entry._tag === "Right") expect(Trajectory.invalidEntry(entry.right)).toBeUndefined()
    }
  })

  it("token secrets", () => {
    expect(fixture.tokenSecrets.map(({ secret }) => AccessTokens.hashSecret(secret))).toEqual(
      fixture.tokenSecrets.map(({ hash }) => hash)
    )
  })

  it("PostgreSQL's stand-in for an over-long lexeme", () => {
    expect(fixture.longLexemes.map(({ repeat, times }) => lexemeOf(repeat.repeat(times)))).toEqual(
      fixture.longLexemes.map(({ lexeme }) => lexeme)
    )
  })

  it.effect("the migration checksum", () =>
    Effect.gen(function*() {
      for (const { checksum, markers, records, sessions } of fixture.storeChecksums) {
        expect(yield* storeChecksum(records, sessions, markers)).toBe(checksum)
      }
    }))
})
