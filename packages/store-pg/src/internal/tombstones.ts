/**
 * The tombstone table: one row per forgotten memory (id, scope, when, by whom, supersession
 * links — never content). Migrated in its own migrations table, independent of the memory
 * table's history.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import { ensureMigratedTo, latestOf, runMigrations } from "./schema.js"

/** @internal */
export const tombstoneTable = "engram_memory_tombstones"

const migrationsTable = "engram_tombstone_migrations"

const migrations = {
  "0001_tombstones": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`CREATE TABLE engram_memory_tombstones (
        seq BIGSERIAL PRIMARY KEY,
        memory_id TEXT COLLATE "C" NOT NULL,
        scope TEXT NOT NULL,
        forgotten_at BIGINT NOT NULL,
        forgotten_by TEXT NOT NULL,
        supersedes TEXT COLLATE "C",
        superseded_by TEXT COLLATE "C"
      )`,
      sql`CREATE INDEX engram_memory_tombstones_id_idx ON engram_memory_tombstones (memory_id)`,
      sql`CREATE INDEX engram_memory_tombstones_scope_idx ON engram_memory_tombstones (scope)`
    ], { discard: true }))
}

/** Creates the tombstone table when missing. */
export const migrateTombstones = runMigrations(migrationsTable, migrations)

/** Checks, without DDL, that the tombstone table exists at this version. */
export const ensureTombstones = ensureMigratedTo(migrationsTable, latestOf(migrations))
