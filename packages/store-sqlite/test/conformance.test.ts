import * as SqlClient from "@effect/sql/SqlClient"
import { runMemoryStoreConformance, runMemoryStoreModelCheck } from "@engram/conformance"
import { SqliteMemoryStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"

const layer = SqliteMemoryStore.layer({ filename: ":memory:" })

runMemoryStoreConformance("sqlite", layer, {
  // An unknown kind, written behind the store's back: the row is still there, but no record.
  corruptRecord: (id) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE engram_memories SET kind = 'bogus' WHERE id = ${id}`)
})
runMemoryStoreModelCheck("sqlite", layer)
