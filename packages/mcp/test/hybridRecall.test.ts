/**
 * `memory_recall` through the MCP SDK client, with and without an embedder in the store's
 * context: the embedding tier finds a memory that shares no word with the query, and without an
 * embedder recall stays lexical.
 */
import { describe, expect, it } from "@effect/vitest"
import { Embeddings, SearchTokenizer } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { connectedTo, storesWith, type ToolResult } from "./fixtures.js"

const withClient = <A>(
  embeddings: Layer.Layer<Embeddings.Embeddings> | undefined,
  body: (call: (name: string, args: Record<string, unknown>) => Effect.Effect<ToolResult>) => Effect.Effect<A>
) => Effect.scoped(Effect.flatMap(connectedTo(storesWith(embeddings)), ({ call }) => body(call)))

const stored = "Doug runs PostgreSQL 16 for the billing service"
const query = "postgres setup?"

const recallIds = (call: (name: string, args: Record<string, unknown>) => Effect.Effect<ToolResult>) =>
  Effect.gen(function*() {
    yield* call("memory_save", { kind: "fact", content: stored })
    yield* call("memory_save", { kind: "fact", content: "The office moved to Lisbon in spring" })
    const recalled = yield* call("memory_recall", { query })
    expect(recalled.isError).toBeFalsy()
    const memories = (recalled.structuredContent?.memories ?? []) as ReadonlyArray<{ content: string }>
    return memories.map((m) => m.content)
  })

describe("memory_recall with the embedding tier", () => {
  it("the query and the memory share no word", () => {
    const words = new Set(SearchTokenizer.tokenize(stored))
    expect(SearchTokenizer.tokenize(query).filter((token) => words.has(token))).toEqual([])
  })

  it.live("with the test embedder, recall finds the memory by sub-word overlap", () =>
    withClient(Embeddings.layerTest(), (call) =>
      Effect.gen(function*() {
        expect((yield* recallIds(call))[0]).toBe(stored)
      })))

  it.live("without an embedder, recall is lexical and finds nothing", () =>
    withClient(undefined, (call) =>
      Effect.gen(function*() {
        expect(yield* recallIds(call)).toEqual([])
      })))
})
