/**
 * @engram/core — Engram's memory model, pure core, service interfaces and in-memory layers.
 *
 * @since 0.1.0
 */
export * as IdGenerator from "./IdGenerator.js"
export * as MemoryQuery from "./MemoryQuery.js"
export * as MemoryRecord from "./MemoryRecord.js"
export * as MemoryRow from "./MemoryRow.js"
export * as MemoryStore from "./MemoryStore.js"
export * as MemoryStoreError from "./MemoryStoreError.js"
export * as MemoryWrite from "./MemoryWrite.js"
export * as SearchTokenizer from "./SearchTokenizer.js"
export * as StoredRows from "./StoredRows.js"
export * as Background from "./Background.js"
export * as ContextSection from "./ContextSection.js"
export * as MemoryOverlay from "./MemoryOverlay.js"
export * as PromptFragment from "./PromptFragment.js"
export * as Routing from "./Routing.js"
export * as RoutingPresets from "./RoutingPresets.js"
export * as RoutingSpecs from "./RoutingSpecs.js"
export * as StoreMigration from "./StoreMigration.js"
export * as SessionMigration from "./SessionMigration.js"
export * as PriorSessionDigest from "./PriorSessionDigest.js"
export * as ProjectedContext from "./ProjectedContext.js"
export * as SessionStore from "./SessionStore.js"
export * as TelemetryStore from "./TelemetryStore.js"
export * as TokenEstimator from "./TokenEstimator.js"
export * as PromotionStore from "./PromotionStore.js"
