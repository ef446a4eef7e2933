/**
 * @engram/store-sql — what Engram's SQL stores share and nothing else needs: the memory record
 * as a table row, row-by-row decoding, search statistics, the telemetry rows, the port a
 * whole-store copy opens, the one transaction of a database and the one-database layer's shape.
 * It holds no driver and no backend: `@engram/store-sqlite` and `@engram/store-pg` stand on it.
 *
 * @since 0.1.0
 */
export * as IndexLanguage from "./IndexLanguage.js"
export * as MemoryRow from "./MemoryRow.js"
export * as MemoryStoreLayers from "./MemoryStoreLayers.js"
export * as MigrationPort from "./MigrationPort.js"
export * as NeighbourWindow from "./NeighbourWindow.js"
export * as SearchStatistics from "./SearchStatistics.js"
export * as SessionRows from "./SessionRows.js"
export * as SqlEngram from "./SqlEngram.js"
export * as SqlTransaction from "./SqlTransaction.js"
export * as StoredRows from "./StoredRows.js"
export * as StoreFailure from "./StoreFailure.js"
export * as TelemetryRows from "./TelemetryRows.js"
