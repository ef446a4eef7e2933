import { describe, expect, it } from "@effect/vitest"
import {
  Background,
  ErrorClass,
  MemoryStoreError,
  PromotionStore,
  Routing,
  RoutingSpecs,
  SessionStore,
  TelemetryStore
} from "@engram/core"
import { FastCheck as fc } from "effect"
import * as Schema from "effect/Schema"

const cause = new Error("disk full")

// Core's typed errors and the class each declares: what the server, the CLI and the tools show
// follows from this (see ErrorClass's table).
const declared: ReadonlyArray<readonly [ErrorClass.Classified, ErrorClass.ErrorClass]> = [
  [new MemoryStoreError.InvalidMemoryInput({ index: 0, problem: "content must not be empty" }), "InvalidInput"],
  [new MemoryStoreError.InvalidReviewState({ state: "maybe" }), "InvalidInput"],
  [new MemoryStoreError.InvalidMemoryQuery({ problem: "limit must be positive" }), "InvalidInput"],
  [new MemoryStoreError.InvalidCursor({ cursor: "x" }), "InvalidInput"],
  [new PromotionStore.InvalidPromotionRow({ index: 0, problem: "no key" }), "InvalidInput"],
  [new SessionStore.InvalidSessionData({ problem: "bad message" }), "InvalidInput"],
  [new TelemetryStore.InvalidTelemetryRow({ problem: "bad row" }), "InvalidInput"],
  [new MemoryStoreError.MemoryNotFound({ id: "m-1" }), "NotFound"],
  [new MemoryStoreError.DuplicateMemoryId({ id: "m-1" }), "Conflict"],
  [new MemoryStoreError.MemoryConflict({ id: "m-1", reason: "it is superseded" }), "Conflict"],
  [new PromotionStore.DuplicatePromotion({ recordId: "m-1", specKey: "s" }), "Conflict"],
  [new TelemetryStore.DuplicateSnapshot({ sessionId: "s", turn: 1, call: 1 }), "Conflict"],
  [new Routing.InvalidPlacement({ specKey: "s", problem: "no section" }), "Misconfigured"],
  [new Background.InvalidBackground({ problem: "duplicate section" }), "Misconfigured"],
  [new RoutingSpecs.RoutingSpecNotFound({ name: "x", available: [] }), "Misconfigured"],
  [new MemoryStoreError.MemoryStoreFailure({ operation: "write", cause }), "Unavailable"],
  [new PromotionStore.PromotionStoreFailure({ operation: "write", cause }), "Unavailable"],
  [new SessionStore.SessionStoreFailure({ operation: "append", cause }), "Unavailable"],
  [new TelemetryStore.TelemetryStoreFailure({ operation: "append", cause }), "Unavailable"]
]

describe("ErrorClass", () => {
  it("every core error declares its class", () => {
    expect(declared.map(([error]) => [error._tag, ErrorClass.classify(error)])).toEqual(
      declared.map(([error, errorClass]) => [error._tag, errorClass])
    )
  })

  it("@effect/sql's errors are Unavailable", () => {
    expect(ErrorClass.classify({ _tag: "SqlError", message: "connection refused" })).toBe("Unavailable")
    expect(ErrorClass.classify({ _tag: "MigrationError", message: "locked" })).toBe("Unavailable")
  })

  it("fromUnknown reads the declared class, and nothing else", () => {
    for (const [error, errorClass] of declared) expect(ErrorClass.fromUnknown(error)).toBe(errorClass)
    expect(ErrorClass.fromUnknown({ _tag: "SqlError", message: "x" })).toBe("Unavailable")
    expect(ErrorClass.fromUnknown(new Error("plain"))).toBeUndefined()
    expect(ErrorClass.fromUnknown({ errorClass: "Teapot" })).toBeUndefined()
    expect(ErrorClass.fromUnknown("MemoryNotFound")).toBeUndefined()
    expect(ErrorClass.fromUnknown(undefined)).toBeUndefined()
  })

  it("an error that declares no class is refused by the compiler", () => {
    class Unclassified extends Schema.TaggedError<Unclassified>()("Unclassified", {}) {}
    // @ts-expect-error an error without an `errorClass` is not Classifiable
    expect(ErrorClass.classify(new Unclassified())).toBe("Unavailable")
  })

  it("the class is not a field: an error encodes and compares as before", () => {
    const error = new MemoryStoreError.MemoryNotFound({ id: "m-1" })
    expect(Object.keys(error)).not.toContain("errorClass")
    expect(Schema.encodeSync(MemoryStoreError.MemoryNotFound)(error)).toEqual({ _tag: "MemoryNotFound", id: "m-1" })
    expect(error).toEqual(new MemoryStoreError.MemoryNotFound({ id: "m-1" }))
  })

  it("the store failures read as before: tag, fields, message and class", () => {
    const failures = [
      new MemoryStoreError.MemoryStoreFailure({ operation: "write", cause }),
      new PromotionStore.PromotionStoreFailure({ operation: "write", cause }),
      new SessionStore.SessionStoreFailure({ operation: "append", cause: "locked" }),
      new TelemetryStore.TelemetryStoreFailure({ operation: "append", cause: 7 })
    ]
    expect(failures.map((failure) => failure.message)).toEqual([
      "memory store write failed: disk full",
      "promotion store write failed: disk full",
      "session store append failed: locked",
      "telemetry store append failed: 7"
    ])
    // The same fields and encoding as the hand-written class they replace.
    class Before extends Schema.TaggedError<Before>()("MemoryStoreFailure", {
      operation: Schema.String,
      cause: Schema.Defect
    }) {}
    const before = new Before({ operation: "write", cause })
    expect(Object.keys(failures[0]!)).toEqual(Object.keys(before))
    expect(Schema.encodeSync(MemoryStoreError.MemoryStoreFailure)(failures[0] as MemoryStoreError.MemoryStoreFailure))
      .toEqual(Schema.encodeSync(Before)(before))
    const full = new MemoryStoreError.MemoryStoreFailure({ operation: "write", cause: { errorClass: "StorageFull" } })
    expect(ErrorClass.classify(full)).toBe("StorageFull")
  })

  it("Failure builds any store's failure: its subject, operation and cause in the message; the cause's class", () => {
    class ShelfFailure extends ErrorClass.Failure<ShelfFailure>()("ShelfFailure", "shelf store") {}
    fc.assert(fc.property(fc.string(), fc.string(), fc.boolean(), (operation, detail, full) => {
      const error = new ShelfFailure({
        operation,
        cause: full ? Object.assign(new Error(detail), { errorClass: "StorageFull" }) : new Error(detail)
      })
      expect(error._tag).toBe("ShelfFailure")
      expect(error.message).toBe(`shelf store ${operation} failed: ${detail}`)
      expect(ErrorClass.classify(error)).toBe(full ? "StorageFull" : "Unavailable")
      expect(error).toBeInstanceOf(Error)
    }))
  })

  it("TaggedError declares the message and class once; they are not fields", () => {
    class ShelfNotFound extends ErrorClass.TaggedError<ShelfNotFound>()("ShelfNotFound", { shelf: Schema.String }, {
      errorClass: "NotFound",
      message: (self) => `no shelf "${self.shelf}"`
    }) {}
    fc.assert(fc.property(fc.string(), (shelf) => {
      const error = new ShelfNotFound({ shelf })
      expect(error.message).toBe(`no shelf "${shelf}"`)
      expect(ErrorClass.classify(error)).toBe("NotFound")
      expect(Object.keys(error).sort()).toEqual(["_tag", "shelf"])
      expect(Schema.encodeSync(ShelfNotFound)(error)).toEqual({ _tag: "ShelfNotFound", shelf })
      expect(Schema.decodeUnknownSync(ShelfNotFound)({ _tag: "ShelfNotFound", shelf }).message).toBe(error.message)
    }))
  })
})

describe("ErrorClass.causeChain and causeMessages", () => {
  it("walk an error's causes outermost first, four deep, each message once", () => {
    const root = new Error("connect ECONNREFUSED 127.0.0.1:5432")
    const middle = new Error("connection failed", { cause: root })
    const top = new Error("connection failed", { cause: middle })
    expect(ErrorClass.causeChain(top)).toEqual([top, middle, root])
    expect(ErrorClass.causeMessages(top)).toBe("connection failed: connect ECONNREFUSED 127.0.0.1:5432")
  })

  it("stop at the depth even when an error is its own cause", () => {
    const loop: { message: string; cause?: unknown } = { message: "loop" }
    loop.cause = loop
    expect(ErrorClass.causeChain(loop)).toHaveLength(4)
    expect(ErrorClass.causeChain(loop, 2)).toHaveLength(2)
    expect(ErrorClass.causeChain(undefined)).toEqual([])
  })
})
