/**
 * The tombstone table: one row per forgotten memory (id, scope, when, by whom, supersession
 * links — never content). Migrated in its own migrations table, so it never collides with the
 * memory table's own migration history.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import { runMigrations } from "./migrations.js"

/** @internal */
export const TOMBSTONE_TABLE = "engram_memory_tombstones"

/** @internal */
export const TOMBSTONE_COLUMNS = ["memory_id", "scope", "forgotten_at", "forgotten_by", "supersedes", "superseded_by"]

const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "0001_tombstones": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE TABLE ${TOMBSTONE_TABLE} (
      seq INTEGER PRIMARY KEY,
      memory_id TEXT NOT NULL COLLATE BINARY,
      scope TEXT NOT NULL,
      forgotten_at INTEGER NOT NULL,
      forgotten_by TEXT NOT NULL,
      supersedes TEXT,
      superseded_by TEXT
    )`)
    yield* sql.unsafe(`CREATE INDEX ${TOMBSTONE_TABLE}_id ON ${TOMBSTONE_TABLE} (memory_id)`)
    yield* sql.unsafe(`CREATE INDEX ${TOMBSTONE_TABLE}_scope ON ${TOMBSTONE_TABLE} (scope)`)
  })
}

/** Where the tombstone migrations are recorded, and how many there are. */
export const TOMBSTONE_MIGRATIONS_TABLE = "engram_tombstone_migrations"
export const TOMBSTONE_MIGRATIONS = Object.keys(migrations).length

/** Creates the tombstone table when missing (idempotent). */
export const migrateTombstones = runMigrations(TOMBSTONE_MIGRATIONS_TABLE, migrations)
