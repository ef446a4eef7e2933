/**
 * @engram/store-pg — PostgreSQL layers for Engram's stores (tsvector/GIN search), with
 * migrations run by the Effect migrator.
 *
 * @since 0.1.0
 */
export * as PgDatabase from "./PgDatabase.js"
export * as PgEngram from "./PgEngram.js"
export * as PgError from "./PgError.js"
export * as PgMemoryStore from "./PgMemoryStore.js"
export * as PgMigration from "./PgMigration.js"
export * as PgPromotionStore from "./PgPromotionStore.js"
export * as PgSchemaName from "./PgSchemaName.js"
export * as PgSessionStore from "./PgSessionStore.js"
export * as PgTelemetryStore from "./PgTelemetryStore.js"
export * as PgVectorIndex from "./PgVectorIndex.js"
