/**
 * How every SQLite store migrates: its own migrations, recorded in its own table, so stores that
 * share a database migrate independently.
 */
import * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Effect from "effect/Effect"

/**
 * Runs `migrations` (idempotent), recorded in `table`. Built with the generic migrator rather
 * than `SqliteMigrator.run`, whose schema-dump support would make a store require a file system
 * and a command executor.
 */
export const runMigrations = (
  table: string,
  migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>>
) => Migrator.make({})({ loader: Migrator.fromRecord(migrations), table })
