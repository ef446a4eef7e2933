import * as SqlClient from "@effect/sql/SqlClient"
import { runMemoryStoreConformance, runMemoryStoreModelCheck } from "@engram/conformance"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const layer = SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))

// The stores of one database: forget deletes promotion rows in its transaction.
runMemoryStoreConformance("sqlite", layer, {
  // An unknown kind, written behind the store's back: the row is still there, but no record.
  corruptRecord: (id) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE engram_memories SET kind = 'bogus' WHERE id = ${id}`)
})
runMemoryStoreModelCheck("sqlite", layer)
