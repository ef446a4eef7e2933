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
import { PgDatabase, PgEngram, PgPromotionStore, PgSessionStore, PgTelemetryStore } from "@engram/store-pg"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { describePg } from "./pgGate.js"
import { dropSchema } from "./utilities.js"

describePg("PgEngram.layer", (url) => {
  it.effect("four stores in one schema, the projection over them, the preset specs", () => {
    const schema = PgDatabase.temporarySchemaName("engram_pgengram")
    return Effect.gen(function*() {
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
      const sql = yield* SqlClient.SqlClient
      const tables = (yield* sql<{ readonly name: string }>`
        SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ${schema}
      `).map((row) => row.name)
      expect(tables).toEqual(expect.arrayContaining([
        "engram_memories",
        PgPromotionStore.TABLE,
        PgSessionStore.MESSAGES_TABLE,
        PgTelemetryStore.INJECTIONS_TABLE
      ]))
    }).pipe(
      Effect.provide(PgEngram.layer({ url, schema, maxConnections: 2 })),
      Effect.ensuring(dropSchema(url, schema))
    )
  })
})
