/**
 * The local embedder on the path that ships: the real encoder, loaded once from the installed
 * weights with every way out of the process blocked — `fetch`, `http`/`https` requests, raw sockets
 * (`net`, `tls`) and DNS — and a store built with it finding a memory by meaning.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Embeddings, IdGenerator, MemoryStore } from "@engram/core"
import { LocalEmbeddingModel, LocalEmbeddings } from "@engram/embedder-local"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodeModule from "node:module"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

// The modules' own objects (what `require` returns), whose functions can be replaced; ES-module
// imports of them are brought in line with `syncBuiltinESMExports`.
const builtin = NodeModule.createRequire(import.meta.url)
const NodeDns = builtin("node:dns") as typeof import("node:dns")
const NodeHttp = builtin("node:http") as typeof import("node:http")
const NodeHttps = builtin("node:https") as typeof import("node:https")
const NodeNet = builtin("node:net") as typeof import("node:net")
const NodeTls = builtin("node:tls") as typeof import("node:tls")

/** Every attempt to leave the process, by what was called. */
const attempts: Array<string> = []
const restore: Array<() => void> = []

/** Replaces `target[key]` by a function that records the call and throws, until `restore` runs. */
const block = (target: object, key: string, name: string) => {
  const holder = target as Record<string, unknown>
  const original = holder[key]
  Object.defineProperty(holder, key, {
    configurable: true,
    writable: true,
    value: (...args: Array<unknown>) => {
      attempts.push(`${name}(${String(args[0]).slice(0, 80)})`)
      throw new Error(`network access attempted: ${name}`)
    }
  })
  restore.push(() => Object.defineProperty(holder, key, { configurable: true, writable: true, value: original }))
}

let embedder: Embeddings.Service

beforeAll(async () => {
  block(globalThis, "fetch", "fetch")
  for (const [module, name] of [[NodeHttp, "http"], [NodeHttps, "https"]] as const) {
    block(module, "request", `${name}.request`)
    block(module, "get", `${name}.get`)
  }
  block(NodeNet, "connect", "net.connect")
  block(NodeNet, "createConnection", "net.createConnection")
  block(NodeTls, "connect", "tls.connect")
  block(NodeDns, "lookup", "dns.lookup")
  block(NodeDns.promises, "lookup", "dns.promises.lookup")
  NodeModule.syncBuiltinESMExports()
  embedder = await Effect.runPromise(LocalEmbeddings.make())
}, 120_000)

afterAll(() => {
  for (const undo of restore.reverse()) undo()
  NodeModule.syncBuiltinESMExports()
})

const embed = (texts: ReadonlyArray<string>) => Effect.runPromise(embedder.embed(texts))

describe("LocalEmbeddings", { timeout: 120_000 }, () => {
  it("embeds offline: unit vectors of 512 numbers, and not one attempt to reach the network", async () => {
    const vectors = await embed(["Doug runs PostgreSQL 16", "The office moved to Lisbon", "postgres setup?"])
    expect(vectors.map((v) => v.length)).toEqual([512, 512, 512])
    for (const v of vectors) expect(Embeddings.dot(v, v)).toBeCloseTo(1, 5)
    expect(attempts).toEqual([])
    expect(embedder.identity).toEqual({
      model: "energetic-ai/universal-sentence-encoder-lite-en@0.2.0+chunks-4000x4",
      dimensions: 512
    })
  })

  it("places a question near the memory that answers it, with no word in common", async () => {
    const [question, answer, other] = await embed([
      "who looks after the database server?",
      "Doug runs PostgreSQL 16 for the billing service",
      "The office moved to Lisbon in May"
    ])
    expect(Embeddings.dot(question!, answer!)).toBeGreaterThan(Embeddings.dot(question!, other!))
  })

  it("reads at most maxChunks pieces of a long text: what follows them changes nothing", async () => {
    const sentence = "The deploy window opens on Tuesday mornings after the backup finishes. "
    const long = sentence.repeat(Math.ceil((4 * 4_000) / sentence.length) + 10)
    const [read, extended] = await embed([long, `${long} Completely different closing words about cooking pasta.`])
    expect(Array.from(extended!)).toEqual(Array.from(read!))
  })

  it("a store built with it finds a memory by meaning, and refuses another embedder's vectors", async () => {
    const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-local-embedder-"))
    const filename = NodePath.join(directory, "engram.db")
    try {
      const layer = (embeddings: Embeddings.Service) =>
        Layer.mergeAll(
          SqliteEngram.layerStoresWithVectors().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))).pipe(
            Layer.provide(Layer.succeed(Embeddings.Embeddings, embeddings))
          ),
          IdGenerator.sequential("local")
        )
      const found = await Effect.runPromise(
        Effect.gen(function*() {
          const store = yield* MemoryStore.MemoryStore
          yield* store.write([
            { content: "Doug runs PostgreSQL 16 for the billing service", kind: "fact" },
            { content: "The office moved to Lisbon in May", kind: "fact" }
          ])
          const result = yield* store.search("postgres setup?", { deliverable: true })
          return result.hits.map((hit) => hit.record.content)
        }).pipe(Effect.provide(layer(embedder)))
      )
      // No word of the question is in either memory ("postgres" is not "postgresql"): keyword
      // search alone finds nothing, the vectors find the answer.
      expect(found[0]).toBe("Doug runs PostgreSQL 16 for the billing service")
      const other = await Effect.runPromise(
        Effect.either(
          Effect.flatMap(MemoryStore.MemoryStore, (store) => store.search("database")).pipe(
            Effect.provide(layer(Embeddings.makeTest()))
          )
        )
      )
      expect(Either.isLeft(other) && other.left._tag).toBe("EmbedderMismatch")
      expect(attempts).toEqual([])
    } finally {
      NodeFs.rmSync(directory, { recursive: true, force: true })
    }
  })

  it("refuses options out of range with a message naming the field", async () => {
    const refused = await Effect.runPromise(Effect.either(LocalEmbeddingModel.makeEncoder({ maxChunks: 0 })))
    expect(Either.isLeft(refused) && refused.left.message).toContain("maxChunks must be an integer from 1 to 64")
  })
})
