import { expect, it } from "@effect/vitest"
import { InjectionLog, SessionStore, TelemetryStore } from "@engram/core"
import { SessionMigration } from "@engram/migrate"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

const T0 = Date.UTC(2025, 4, 1, 8, 0, 0, 123)
const at = (offset: number) => DateTime.unsafeMake(T0 + offset)

const operator = (text: string, offset: number) => new SessionStore.OperatorMessage({ text, at: at(offset) })
const assistant = (text: string, offset: number) =>
  new SessionStore.AssistantMessage({
    text,
    toolCalls: [{ id: `call-${offset}`, name: "memory_save", params: { content: text, tags: ["a", "ü"] } }],
    at: at(offset)
  })
const interrupt = (turn: number, reason = "needs approval") =>
  new SessionStore.PendingInterrupt({ turn, toolCalls: [], reason, at: at(turn) })
const injection = (sessionId: string, turn: number) =>
  new InjectionLog.InjectionLogRow({
    sessionId,
    turn,
    memoryIds: turn % 2 === 0 ? [`mem-${turn}`] : [],
    sectionLabels: ["working_state", "recalled_memory"],
    mode: "native",
    at: at(turn)
  })

const stores = () => {
  const sessions = { from: SessionStore.makeMemory(), to: SessionStore.makeMemory() }
  const telemetry = { from: TelemetryStore.makeMemory(), to: TelemetryStore.makeMemory() }
  return { sessions, telemetry }
}

/** Three sessions with messages (one with 1,234 of them and an interrupt), one with only injection rows. */
const populate = (s: SessionMigration.SessionStores) =>
  Effect.gen(function*() {
    const sessions = s.sessions!.from
    const telemetry = s.telemetry!.from
    yield* sessions.append("alpha", [operator("Hi, I'm Doug", 0), assistant("Hello Doug — ça va? 🦊", 1)])
    yield* sessions.append("big", Array.from({ length: 1_234 }, (_, i) => operator(`m${i}`, i)))
    yield* sessions.putInterrupt("big", interrupt(7))
    yield* sessions.putInterrupt("waiting", interrupt(2, "forget mem-1?"))
    for (let turn = 0; turn < 5; turn++) yield* telemetry.appendInjection(injection("alpha", turn))
    yield* telemetry.appendInjection(injection("telemetry-only", 0))
  })

const encodeMessage = Schema.encodeSync(SessionStore.SessionMessage)
const snapshot = (s: SessionMigration.SessionStores, side: "from" | "to") =>
  Effect.gen(function*() {
    const out: Record<string, unknown> = {}
    for (const id of ["alpha", "big", "waiting", "telemetry-only"]) {
      out[id] = {
        messages: (yield* s.sessions![side].load(id)).messages.map((m) => encodeMessage(m)),
        interrupt: Option.getOrNull(yield* s.sessions![side].getInterrupt(id)),
        injections: (yield* s.telemetry![side].listInjections(id)).rows.map((row) => row.turn)
      }
    }
    return out
  })

it.effect("copies every session's messages, interrupt and injection rows, and verifies", () =>
  Effect.gen(function*() {
    const s = stores()
    yield* populate(s)
    const events: Array<SessionMigration.SessionMigrationProgress> = []
    const report = yield* SessionMigration.copySessions(s, {
      batchSize: 100,
      onProgress: (p) => Effect.sync(() => void events.push(p))
    })
    expect(yield* snapshot(s, "to")).toEqual(yield* snapshot(s, "from"))
    expect(report).toMatchObject({ messagesCopied: 1_236, interruptsCopied: 2, injectionsCopied: 6 })
    expect(report.source).toEqual(report.target)
    expect(report.source).toMatchObject({ sessions: 4, messages: 1_236, interrupts: 2, injections: 6, unreadable: 0 })
    expect(report.source.checksum).toMatch(/^[0-9a-f]{64}$/)
    expect(events.map((e) => `${e.phase}:${e.done}/${e.total}`)).toEqual([
      "scanned:0/4",
      "copying:1/4",
      "copying:2/4",
      "copying:3/4",
      "copying:4/4",
      "verifying:4/4"
    ])
    // A second run finds everything in place and writes nothing.
    const again = yield* SessionMigration.copySessions(s)
    expect(again).toMatchObject({ messagesCopied: 0, interruptsCopied: 0, injectionsCopied: 0 })
  }))

it.effect("resumes after a failure: only what is missing is appended, and the result verifies", () =>
  Effect.gen(function*() {
    const s = stores()
    yield* populate(s)
    // The target's appends fail after three batches, as a dropped connection would.
    let appends = 0
    const flaky: SessionStore.Service = {
      ...s.sessions.to,
      append: (sessionId, messages) =>
        ++appends > 3
          ? Effect.fail(new SessionStore.SessionStoreFailure({ operation: "append", cause: new Error("reset") }))
          : s.sessions.to.append(sessionId, messages)
    }
    const failed = yield* Effect.flip(
      SessionMigration.copySessions({ ...s, sessions: { from: s.sessions.from, to: flaky } }, { batchSize: 100 })
    )
    expect(failed).toBeInstanceOf(SessionStore.SessionStoreFailure)
    const partial = (yield* s.sessions.to.load("big")).messages.length
    expect(partial).toBe(200)
    const report = yield* SessionMigration.copySessions(s, { batchSize: 100 })
    expect(report.messagesCopied).toBe(1_234 - partial)
    expect(yield* snapshot(s, "to")).toEqual(yield* snapshot(s, "from"))
  }))

it.effect("never deletes: a target with other history fails verification, naming the counts", () =>
  Effect.gen(function*() {
    const s = stores()
    yield* populate(s)
    yield* s.sessions.to.append("alpha", [operator("something else entirely", 0)])
    const error = yield* Effect.flip(SessionMigration.copySessions(s))
    expect(error).toBeInstanceOf(SessionMigration.SessionMigrationMismatch)
    if (error._tag !== "SessionMigrationMismatch") return
    expect(error.source.messages).toBe(1_236)
    expect(error.target.messages).toBe(1_235)
    expect(error.message).toContain("the target holds 1235 messages but the source 1236")
    // The foreign message is still there, and nothing was appended after it.
    expect((yield* s.sessions.to.load("alpha")).messages.map((m) => m._tag === "ToolMessage" ? "" : m.text)).toEqual([
      "something else entirely"
    ])
  }))

it.effect("a target's other pending interrupt is replaced by the source's", () =>
  Effect.gen(function*() {
    const s = stores()
    yield* populate(s)
    yield* s.sessions.to.putInterrupt("waiting", interrupt(1, "an older question"))
    const report = yield* SessionMigration.copySessions(s)
    expect(report.interruptsCopied).toBe(2)
    expect(Option.map(yield* s.sessions.to.getInterrupt("waiting"), (i) => i.reason)).toEqual(
      Option.some("forget mem-1?")
    )
  }))

it.effect("digests agree across stores holding the same sessions, and differ when one row differs", () =>
  Effect.gen(function*() {
    const s = stores()
    yield* populate(s)
    yield* SessionMigration.copySessions(s)
    const before = yield* SessionMigration.digest(s, "to")
    yield* s.telemetry.to.appendInjection(injection("alpha", 99))
    const after = yield* SessionMigration.digest(s, "to")
    expect(after.injections).toBe(before.injections + 1)
    expect(after.checksum).not.toBe(before.checksum)
    // Without any stores, a digest is empty but well-defined.
    expect(yield* SessionMigration.digest({}, "from")).toMatchObject({ sessions: 0, messages: 0 })
  }))

const run = (first: number, last: number, outcome: "extracted" | "failed" = "extracted") =>
  new SessionStore.ExtractionRun({
    at: at(first),
    turns: { first, last },
    outcome,
    calls: 1,
    usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120, estimated: false },
    written: outcome === "extracted" ? [`mem-${first}`] : [],
    corroborated: [],
    ...(outcome === "failed" ? { problem: "the model was down" } : {})
  })

it.effect("copies extraction ledgers — a ledger-only session too — resumes a partial one, and verifies them", () =>
  Effect.gen(function*() {
    const s = stores()
    yield* populate(s)
    const ledger = [run(1, 1), run(2, 2, "failed"), run(2, 2)]
    for (const r of ledger) yield* s.sessions.from.recordExtraction("alpha", r)
    yield* s.sessions.from.recordExtraction("acp-only", run(1, 3))
    // The target already holds the first run (an earlier, interrupted copy).
    yield* s.sessions.to.recordExtraction("alpha", ledger[0]!)
    const report = yield* SessionMigration.copySessions(s)
    expect(report.extractionsCopied).toBe(3)
    expect(report.source).toMatchObject({ sessions: 5, extractions: 4 })
    expect(report.target).toEqual(report.source)
    const summary = SessionStore.summarizeExtractions((yield* s.sessions.to.loadExtractions("alpha")).runs)
    expect(summary).toMatchObject({ through: 2, runs: 3, tokens: 360, failures: 0 })
    expect((yield* s.sessions.to.loadExtractions("acp-only")).runs.map((r) => r.turns)).toEqual([{ first: 1, last: 3 }])
    expect((yield* SessionMigration.copySessions(s)).extractionsCopied).toBe(0)
    // A run in the target that the source does not have: nothing is rewritten, verification fails.
    yield* s.sessions.to.recordExtraction("alpha", run(3, 3))
    const error = yield* Effect.flip(SessionMigration.copySessions(s))
    expect(error).toBeInstanceOf(SessionMigration.SessionMigrationMismatch)
    expect(error.message).toContain("the target holds 5 extraction runs but the source 4")
  }))
