/**
 * @engram/store-sqlite — Engram's stores on an embedded SQLite database: the client, the memory
 * store (FTS5 search) and the import of legacy v1 knowledge stores.
 *
 * @since 0.1.0
 */
export * as LegacyImport from "./LegacyImport.js"
export * as SqliteDatabase from "./SqliteDatabase.js"
export * as SqliteEngram from "./SqliteEngram.js"
export * as SqliteMemoryStore from "./SqliteMemoryStore.js"
export * as SqliteMigration from "./SqliteMigration.js"
export * as SqlitePromotionStore from "./SqlitePromotionStore.js"
export * as SqliteSessionStore from "./SqliteSessionStore.js"
export * as SqliteTelemetryStore from "./SqliteTelemetryStore.js"
export * as SqliteVectorIndex from "./SqliteVectorIndex.js"
