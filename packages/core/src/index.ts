/**
 * @engram/core — Engram's memory model, pure core, service interfaces and in-memory layers.
 *
 * @since 0.1.0
 */
export * as IdGenerator from "./IdGenerator.js"
export * as MemoryQuery from "./MemoryQuery.js"
export * as MemoryRecord from "./MemoryRecord.js"
export * as MemoryStore from "./MemoryStore.js"
export * as MemoryStoreError from "./MemoryStoreError.js"
export * as MemoryWrite from "./MemoryWrite.js"
export * as SearchTokenizer from "./SearchTokenizer.js"
