/**
 * @engram/conformance — the kit every Engram store backend runs to prove it keeps the contract.
 *
 * @since 0.1.0
 */
export * as MemoryStoreConformance from "./MemoryStoreConformance.js"
export * as SearchCorpus from "./SearchCorpus.js"

export {
  /**
   * Registers the conformance suite for one backend (see `MemoryStoreConformance`).
   *
   * @since 0.1.0
   * @category conformance
   */
  runMemoryStoreConformance,
  /**
   * Registers the model-based test for one backend (see `MemoryStoreConformance`).
   *
   * @since 0.1.0
   * @category conformance
   */
  runMemoryStoreModelCheck
} from "./MemoryStoreConformance.js"
export * as PromotionConformance from "./PromotionConformance.js"
export {
  /**
   * Registers the promotion-store conformance suite for one backend (see `PromotionConformance`).
   *
   * @since 0.1.0
   * @category conformance
   */
  runPromotionStoreConformance
} from "./PromotionConformance.js"
export {
  /**
   * The Tier 2 queries and their sorted match sets (see `SearchCorpus`).
   *
   * @since 0.1.0
   * @category corpus
   */
  searchCases,
  /**
   * The shared Tier 2 corpus (see `SearchCorpus`).
   *
   * @since 0.1.0
   * @category corpus
   */
  searchCorpus
} from "./SearchCorpus.js"
export * as SessionStoreConformance from "./SessionStoreConformance.js"
export {
  /**
   * Registers the session-store conformance suite for one backend (see `SessionStoreConformance`).
   *
   * @since 0.1.0
   * @category conformance
   */
  runSessionStoreConformance
} from "./SessionStoreConformance.js"
export * as StoreOptionsConformance from "./StoreOptionsConformance.js"
export {
  /**
   * Registers the store options suite for one persistent backend (see `StoreOptionsConformance`).
   *
   * @since 0.1.0
   * @category conformance
   */
  runStoreOptionsConformance
} from "./StoreOptionsConformance.js"
export * as TelemetryStoreConformance from "./TelemetryStoreConformance.js"
export {
  /**
   * Registers the telemetry-store conformance suite for one backend (see `TelemetryStoreConformance`).
   *
   * @since 0.1.0
   * @category conformance
   */
  runTelemetryStoreConformance
} from "./TelemetryStoreConformance.js"
export * as VectorConformance from "./VectorConformance.js"
export {
  /**
   * Registers the vector tier for one backend (see `VectorConformance`).
   *
   * @since 0.1.0
   * @category conformance
   */
  runVectorConformance
} from "./VectorConformance.js"
