import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import {
  ContextProjection,
  MemoryStore,
  PromotionStore,
  RoutingPresets,
  RoutingSpecs,
  SessionStore,
  TelemetryStore
} from "@engram/core"
import { SqliteEngram, SqlitePromotionStore, SqliteSessionStore, SqliteTelemetryStore } from "@engram/store-sqlite"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

it.effect("SqliteEngram.layer: four stores on one file, the projection over them, the preset specs", () =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const [doug] = yield* memories.write([
      { content: "My name is Doug", kind: "profile", label: "name", sourceType: "operator" }
    ])
    const sessions = yield* SessionStore.SessionStore
    yield* sessions.append("s-1", [new SessionStore.OperatorMessage({ text: "hello", at: DateTime.unsafeNow() })])
    yield* PromotionStore.PromotionStore
    yield* TelemetryStore.TelemetryStore
    const projected = yield* Effect.flatMap(
      ContextProjection.ContextProjection,
      (projection) =>
        projection.project({ sessionId: "s-1", turn: 0, query: "doug", scopes: ["global"], mode: "native" })
    )
    expect(projected.sections.flatMap((section) => section.memoryIds)).toContain(doug!.id)
    const spec = yield* Effect.flatMap(
      RoutingSpecs.RoutingSpecs,
      (specs) => specs.resolve(RoutingPresets.userBackground.key)
    )
    expect(spec.key).toBe(RoutingPresets.userBackground.key)
    // Every store's tables are in the one database the layer opened.
    const sql = yield* SqlClient.SqlClient
    const tables = (yield* sql<{ readonly name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`)
      .map((row) => row.name)
    expect(tables).toEqual(expect.arrayContaining([
      "engram_memories",
      SqlitePromotionStore.TABLE,
      SqliteSessionStore.MESSAGES_TABLE,
      SqliteTelemetryStore.INJECTIONS_TABLE
    ]))
    const stored = yield* sql<{ readonly n: number }>`SELECT count(*) AS n FROM ${
      sql(SqliteSessionStore.MESSAGES_TABLE)
    }`
    expect(stored[0]!.n).toBe(1)
  }).pipe(
    Effect.provide(SqliteEngram.layer({ filename: join(directory, "engram.db") }))
  ))

const directory = mkdtempSync(join(tmpdir(), "engram-sqlite-engram-"))
process.on("exit", () => rmSync(directory, { recursive: true, force: true }))
