import { runVectorConformance } from "@engram/conformance"
import { SqliteMemoryStore, SqliteVectorIndex } from "@engram/store-sqlite"

runVectorConformance("sqlite", SqliteMemoryStore.layer({ filename: ":memory:" }), {
  vectorIndex: SqliteVectorIndex.make
})
