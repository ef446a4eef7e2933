import { describe, expect, it } from "@effect/vitest"
import { SessionStore } from "@engram/core"
import { DateTime, Effect, Either, Option, Schema } from "effect"

const { AssistantMessage, OperatorMessage, PendingInterrupt, ToolMessage } = SessionStore

const at = DateTime.unsafeMake("2025-03-01T12:00:00.000Z")

const conversation: ReadonlyArray<SessionStore.SessionMessage> = [
  new OperatorMessage({ text: "Hi, I'm Doug", at }),
  new AssistantMessage({
    text: "",
    toolCalls: [
      { id: "call-1", name: "memory_save", params: { kind: "profile", label: "name", content: "Doug", tags: [] } }
    ],
    at
  }),
  new ToolMessage({
    results: [
      { id: "call-1", name: "memory_save", isFailure: false, result: { id: "m-1", n: 1.5, ok: true, x: null } }
    ],
    at
  }),
  new AssistantMessage({ text: "Nice to meet you, Doug.", toolCalls: [], at })
]

const encode = Schema.encodeSync(Schema.Array(SessionStore.SessionMessage))

describe("SessionStore (memory layer)", () => {
  it.effect("keeps operator, assistant and tool messages of a session in append order", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      yield* store.append("s-1", conversation.slice(0, 2))
      yield* store.append("s-2", [new OperatorMessage({ text: "another session", at })])
      yield* store.append("s-1", conversation.slice(2))
      const history = yield* store.load("s-1")
      expect(history.skipped).toBe(0)
      expect(history.messages.map((m) => m._tag)).toEqual([
        "OperatorMessage",
        "AssistantMessage",
        "ToolMessage",
        "AssistantMessage"
      ])
      expect(encode(history.messages)).toEqual(encode(conversation))
      expect(history.messages[0]).toBeInstanceOf(OperatorMessage)
      expect((yield* store.load("s-2")).messages).toHaveLength(1)
      expect(yield* store.load("unknown")).toEqual({ messages: [], skipped: 0 })
    }).pipe(Effect.provide(SessionStore.layerMemory)))

  it.effect("stores nothing from a batch holding an invalid message, and says which one", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const bad = new ToolMessage(
        { results: [{ id: "c", name: "t", isFailure: false, result: Number.NaN }], at },
        { disableValidation: true }
      )
      const error = yield* Effect.flip(store.append("s-1", [conversation[0]!, bad]))
      expect(error._tag).toBe("InvalidSessionData")
      expect(error.message).toContain("message #1")
      expect((yield* store.load("s-1")).messages).toEqual([])
    }).pipe(Effect.provide(SessionStore.layerMemory)))

  it.effect("puts, reads and clears a session's pending interrupt", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      expect(Option.isNone(yield* store.getInterrupt("s-1"))).toBe(true)
      const first = new PendingInterrupt({
        turn: 3,
        toolCalls: [{ id: "c1", name: "deploy", params: {} }],
        reason: "needs approval",
        at
      })
      const second = new PendingInterrupt({ turn: 4, toolCalls: [], reason: "again", at, detail: { step: [1, 2] } })
      yield* store.putInterrupt("s-1", first)
      yield* store.putInterrupt("s-1", second)
      const held = Option.getOrThrow(yield* store.getInterrupt("s-1"))
      expect(held).toBeInstanceOf(PendingInterrupt)
      expect(Schema.encodeSync(PendingInterrupt)(held)).toEqual(Schema.encodeSync(PendingInterrupt)(second))
      expect(Option.isNone(yield* store.getInterrupt("s-2"))).toBe(true)
      yield* store.clearInterrupt("s-1")
      yield* store.clearInterrupt("s-1")
      expect(Option.isNone(yield* store.getInterrupt("s-1"))).toBe(true)
    }).pipe(Effect.provide(SessionStore.layerMemory)))

  it.effect("keeps legacy context frames in storage, and the model view strips them", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const frame = new OperatorMessage({ text: "<context>stale recall</context>", at, legacyContextFrame: true })
      yield* store.append("s-1", [conversation[0]!, frame, conversation[3]!])
      const history = yield* store.load("s-1")
      expect(history.messages).toHaveLength(3)
      expect(history.messages[1]!.legacyContextFrame).toBe(true)
      const view = SessionStore.modelView(history.messages)
      expect(view.stripped).toBe(1)
      const texts = view.messages.map((m) => (m._tag === "ToolMessage" ? "" : m.text))
      expect(texts).toEqual(["Hi, I'm Doug", "Nice to meet you, Doug."])
    }).pipe(Effect.provide(SessionStore.layerMemory)))
})

describe("session encoding", () => {
  it("round-trips every message through plain JSON", () => {
    for (const message of conversation) {
      const encoded = Either.getOrThrow(SessionStore.encodeMessage(message))
      const decoded = Either.getOrThrow(SessionStore.decodeStoredMessage(JSON.parse(JSON.stringify(encoded))))
      expect(Either.getOrThrow(SessionStore.encodeMessage(decoded))).toEqual(encoded)
    }
  })

  it("rejects session ids that cannot name a session scope", () => {
    expect(Schema.is(SessionStore.SessionId)("s-1")).toBe(true)
    expect(Schema.is(SessionStore.SessionId)("has space")).toBe(false)
    expect(Schema.is(SessionStore.SessionId)("")).toBe(false)
    expect(Schema.is(SessionStore.SessionId)("x".repeat(201))).toBe(false)
  })

  it("one rule and one message for a session id: the schema's and validateSessionId's", () => {
    expect(SessionStore.validateSessionId("s-1")).toEqual(Either.right("s-1"))
    for (const bad of ["has space", "", "x".repeat(201), "tab\there"]) {
      const problem = `${
        JSON.stringify(bad)
      } is not a session id (1-200 characters, no whitespace or control characters)`
      expect(SessionStore.validateSessionId(bad)).toEqual(Either.left(problem))
      const decoded = Schema.decodeUnknownEither(SessionStore.SessionId)(bad)
      expect(Either.isLeft(decoded) && decoded.left.message).toContain(problem)
    }
  })

  it("accepts only JSON values as tool parameters and results", () => {
    const isJson = Schema.is(SessionStore.JsonValue)
    expect(isJson({ a: [1, "b", null, { c: true }] })).toBe(true)
    expect(isJson(Number.POSITIVE_INFINITY)).toBe(false)
    expect(isJson(undefined)).toBe(false)
    expect(isJson({ a: new Date() })).toBe(false)
    expect(isJson(new Map([["a", 1]]))).toBe(false)
    expect(isJson(Object.create(null))).toBe(true)
    const cyclic: Record<string, unknown> = {}
    cyclic.self = cyclic
    expect(isJson(cyclic)).toBe(false)
    const shared = { n: 1 }
    expect(isJson([shared, shared])).toBe(true)
  })
})
