/**
 * `--language` (and `ENGRAM_LANGUAGE`) through the shipped bundle: a new store is created in the
 * language given and stems in it; reopened without one it keeps its own; reopened in another it
 * is refused naming both (decision 0196); a word that names no language is refused with the list.
 * `engram migrate` takes `--language` as its target's: `migrateLanguage.test.ts`.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { existsSync } from "node:fs"
import * as Path from "node:path"
import { decodeRecordJson, engram, engramJson, engramWithEnv, expectRefused, tempDir } from "./utilities.js"

type Hits = { hits: ReadonlyArray<{ record: unknown }> }
const hitIds = (json: unknown) => (json as Hits).hits.map((h) => decodeRecordJson(h.record).record.id)

const add = async (db: string, content: string, ...flags: ReadonlyArray<string>): Promise<string> => {
  const added = await engramJson("memory", "add", content, "--kind", "fact", "--db", db, ...flags) as {
    record: unknown
  }
  return decodeRecordJson(added.record).record.id
}

describe("engram --language", { timeout: 120_000 }, () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  const german = Path.join(tmp.dir, "german.db")
  const english = Path.join(tmp.dir, "english.db")
  let houses = ""

  it("creates a new store in the language given, which stems in it (Haus finds Häuser)", async () => {
    houses = await add(german, "Die Häuser am Fluss sind alt", "--language", "de")
    expect(hitIds(await engramJson("memory", "search", "Haus", "--db", german, "--language", "de"))).toEqual([houses])
    // The same memory in a store created without --language (English) is not found by the stem.
    await add(english, "Die Häuser am Fluss sind alt")
    expect(hitIds(await engramJson("memory", "search", "Haus", "--db", english))).toEqual([])
  })

  it("reopens the store without --language in the language it records", async () => {
    expect(hitIds(await engramJson("memory", "search", "Haus", "--db", german))).toEqual([houses])
  })

  it("refuses the store in another language, naming both (exit 1)", async () => {
    const run = await engram("memory", "search", "Haus", "--db", german, "--language", "en")
    expectRefused(run, `the memory store at ${german} is in german, not english (--language en)`)
    expect(run.stderr).toContain("give --language de or no --language to open it")
    // The same refusal from the environment, and for the English store asked to open in German.
    expectRefused(
      await engramWithEnv({ ENGRAM_LANGUAGE: "english" }, "memory", "list", "--db", german),
      "is in german, not english"
    )
    expectRefused(
      await engram("memory", "list", "--db", english, "--language", "german"),
      "is in english, not german (--language de)"
    )
  })

  it("takes ENGRAM_LANGUAGE for a new store, and --language over it", async () => {
    const fromEnv = Path.join(tmp.dir, "env.db")
    const run = await engramWithEnv(
      { ENGRAM_LANGUAGE: "de" },
      "memory",
      "add",
      "Die Häuser am Fluss sind alt",
      "--kind",
      "fact",
      "--db",
      fromEnv
    )
    expect(run.code).toBe(0)
    expect(hitIds(await engramJson("memory", "search", "Haus", "--db", fromEnv))).toHaveLength(1)
    expectRefused(
      await engramWithEnv({ ENGRAM_LANGUAGE: "de" }, "memory", "list", "--db", fromEnv, "--language", "fr"),
      "is in german, not french"
    )
  })

  it("refuses a word that names no language, listing them, before any store is opened", async () => {
    const missing = Path.join(tmp.dir, "never.db")
    const run = await engram("memory", "add", "x", "--kind", "fact", "--db", missing, "--language", "klingon")
    expectRefused(run, `--language: "klingon" is not a language Engram stems in; use one of en (english)`)
    expect(run.stderr).toContain("de (german)")
    expect(run.stderr).toContain("none")
    expectRefused(
      await engramWithEnv({ ENGRAM_LANGUAGE: "xx" }, "memory", "list", "--db", missing),
      `ENGRAM_LANGUAGE: "xx" is not a language Engram stems in`
    )
    expect(existsSync(missing)).toBe(false)
  })
})
