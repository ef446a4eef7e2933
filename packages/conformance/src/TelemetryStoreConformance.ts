/**
 * The `TelemetryStore` conformance kit: one suite every telemetry-store backend runs from its own
 * vitest file, so the in-memory, SQLite and PostgreSQL stores keep the same injection log.
 *
 * Covered: rows read back field for field (millisecond timestamps, every mode, empty lists); one
 * row per append in append order, a resumed turn's second row included; sessions kept apart;
 * invalid rows — an incognito or subagent row naming memories, a negative turn — refused with a
 * typed error and never stored; the row `InjectionLog.fromProjection` builds; and the listing
 * of every session with rows, in one order on every backend.
 *
 * Prompt snapshots and the trajectory: a snapshot reads back field for field with its entries;
 * blobs are content-addressed (twenty calls over one prefix store it once) and message positions
 * are written once; listings are ordered by turn then call and filter by both; a taken
 * `(session, turn, call)`, an entry whose hash is not its body's, a snapshot naming a blob it did
 * not bring, and a snapshot that does not encode are refused and store nothing; usage is recorded
 * after the fact; retention removes whole sessions by age and by count, and nothing else; forgetting
 * a memory removes its text from the trajectory and full text and re-points the snapshots.
 *
 * Every test builds the layer afresh, so a backend on a shared server must hand each build its
 * own empty store.
 *
 * @example
 * ```ts
 * import { runTelemetryStoreConformance } from "@engram/conformance"
 * import { TelemetryStore } from "@engram/core"
 *
 * runTelemetryStoreConformance("in-memory", TelemetryStore.layerMemory)
 * ```
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import {
  InjectionLog,
  ProjectionLayout,
  PromptFragment,
  PromptSnapshot,
  SessionStore,
  TelemetryStore,
  Trajectory
} from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const T0 = Date.UTC(2025, 2, 14, 9, 26, 53, 589)

/**
 * An injection row (validated only when appended).
 *
 * @since 0.1.0
 * @category fixtures
 */
export const injectionRow = (
  fields: Partial<ConstructorParameters<typeof InjectionLog.InjectionLogRow>[0]> = {}
): InjectionLog.InjectionLogRow =>
  new InjectionLog.InjectionLogRow({
    sessionId: "s-1",
    turn: 0,
    memoryIds: ["mem-1", "mem-2"],
    sectionLabels: ["working_state", "always_on_memory", "recalled_memory"],
    mode: "native",
    at: DateTime.unsafeMake(T0),
    ...fields
  }, { disableValidation: true })

/**
 * A prompt snapshot of call `call` of turn `turn`, with the trajectory entries it refers to: a
 * two-section prefix (one fragment from memory `mem-1`), the session's messages up to the turn's
 * input, and a projection delivering `mem-2`. Every turn shares the prefix blob; the projection
 * blob differs per turn.
 *
 * @since 0.1.0
 * @category fixtures
 */
export const snapshotFixture = (
  options: { readonly sessionId?: string; readonly turn?: number; readonly call?: number; readonly at?: number } = {}
): {
  readonly snapshot: PromptSnapshot.PromptSnapshot
  readonly entries: ReadonlyArray<Trajectory.TrajectoryEntry>
} => {
  const sessionId = options.sessionId ?? "s-1"
  const turn = options.turn ?? 1
  const call = options.call ?? 0
  const at = DateTime.unsafeMake(options.at ?? T0)
  const prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData> = [
    { name: "identity", source: "role", fragments: [PromptFragment.authored("You are a careful assistant.")] },
    {
      name: "context",
      source: "instance",
      fragments: [PromptFragment.authored("## About the user\n"), PromptFragment.memory("- **name**: Doug", ["mem-1"])]
    }
  ]
  const messages = Array.from(
    { length: turn },
    (_, t) => new SessionStore.OperatorMessage({ text: `question ${t + 1}`, at: DateTime.unsafeMake(T0 + t) })
  )
  const projection = ProjectionLayout.composeProjectedContext({
    now: at,
    workingState: `turn ${turn}`,
    alwaysOn: []
  }, { mode: "native", budget: ProjectionLayout.tokens(16_000) })
  const prefixBlob = Trajectory.prefixBlob(prefix)
  const projectionBlob = Trajectory.projectionBlob(projection)
  const snapshot = new PromptSnapshot.PromptSnapshot({
    sessionId,
    turn,
    call,
    mode: "native",
    at,
    model: "scripted",
    tools: ["memory_save", "memory_recall"],
    prefix: {
      hash: prefixBlob.hash,
      chars: PromptFragment.joinPrompt(prefix).length,
      sections: prefix.map((section) => ({
        name: section.name,
        source: section.source,
        chars: PromptFragment.joinFragments(section.fragments).length,
        hash: Trajectory.contentHash(PromptFragment.joinFragments(section.fragments)),
        fragments: section.fragments.map((f) => ({
          source: f.source,
          chars: f.text.length,
          memoryIds: f.source === "memory" ? f.memoryIds : []
        }))
      }))
    },
    messages: { input: turn - 1, count: turn },
    projection: {
      hash: projectionBlob.hash,
      chars: projection.text.length,
      budgetTokens: projection.budget.budgetTokens,
      budgetChars: projection.budget.budgetChars,
      sections: projection.sections.map((section) => ({ ...section, memoryIds: [...section.memoryIds, "mem-2"] })),
      shed: [{ section: "recalled_memory", ref: "mem-3", chars: 40 }],
      withheld: [{ section: "recalled_memory", ref: "mem-1", reason: "in-prefix" }],
      suppressed: []
    },
    strippedFrames: [],
    request: { hash: Trajectory.contentHash(`request ${turn}.${call}`), chars: 120, messages: 3 },
    usage: null,
    fullText: null
  })
  return {
    snapshot,
    entries: [prefixBlob, ...messages.map((m, seq) => Trajectory.messageEntry(seq, m)), projectionBlob]
  }
}

const encode = Schema.encodeSync(InjectionLog.InjectionLogRow)
const encodeSnapshot = Schema.encodeSync(PromptSnapshot.PromptSnapshot)
const plain = (rows: ReadonlyArray<InjectionLog.InjectionLogRow>) => rows.map((row) => encode(row))
const store = TelemetryStore.TelemetryStore

/**
 * Registers the telemetry-store conformance suite for one backend. Call it at the top level of a
 * vitest file. `RExtra` is whatever else the layer provides (a SQL client, say).
 *
 * @since 0.1.0
 * @category conformance
 */
export const runTelemetryStoreConformance = <RExtra = never, E = never>(
  name: string,
  layer: Layer.Layer<TelemetryStore.TelemetryStore | RExtra, E>
): void => {
  const provide = <A, E2>(self: Effect.Effect<A, E2, TelemetryStore.TelemetryStore>) =>
    Effect.provide(self, layer) as Effect.Effect<A, E2 | E>

  describe(`TelemetryStore conformance: ${name}`, () => {
    it.effect("reads rows back field for field, one per append, in append order", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const rows = [
          injectionRow({ turn: 0 }),
          injectionRow({
            turn: 1,
            memoryIds: [],
            sectionLabels: [],
            mode: "external",
            at: DateTime.unsafeMake(T0 + 1)
          }),
          injectionRow({ turn: 2, memoryIds: [], sectionLabels: ["working_state", "skills_index"], mode: "incognito" }),
          injectionRow({ turn: 2, memoryIds: ["mem-9"], sectionLabels: ["recalled_memory"], mode: "autonomous" }),
          injectionRow({ turn: 1_000_000, mode: "subagent", memoryIds: [], sectionLabels: [] })
        ]
        for (const row of rows) yield* s.appendInjection(row)
        const log = yield* s.listInjections("s-1")
        expect(log.skipped).toBe(0)
        expect(plain(log.rows)).toEqual(plain(rows))
        expect(DateTime.toEpochMillis(log.rows[1]!.at)).toBe(T0 + 1)
      })))

    it.effect("an unknown session has no rows; sessions never see each other's rows", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        expect(yield* s.listInjections("nobody")).toEqual({ rows: [], skipped: 0 })
        for (let i = 0; i < 30; i++) {
          yield* s.appendInjection(injectionRow({ sessionId: i % 3 === 0 ? "a" : "b", turn: i }))
        }
        expect((yield* s.listInjections("a")).rows.map((row) => row.turn)).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24, 27])
        expect((yield* s.listInjections("b")).rows).toHaveLength(20)
      })))

    it.effect("lists every session with a row, once, in code-unit order", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        expect(yield* s.listSessions()).toEqual([])
        // "～" (U+FF5E) sorts after "😀" by UTF-16 code units, before it by UTF-8 bytes.
        for (const sessionId of ["～wave", "😀smile", "b", "A", "b", "～wave"]) {
          yield* s.appendInjection(injectionRow({ sessionId }))
        }
        yield* Effect.flip(s.appendInjection(injectionRow({ sessionId: "refused", turn: -1 })))
        expect(yield* s.listSessions()).toEqual(["A", "b", "😀smile", "～wave"])
      })))

    it.effect("refuses a memory-free mode's row that names memories, and stores nothing", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        for (const mode of ["incognito", "subagent"] as const) {
          const error = yield* Effect.flip(s.appendInjection(injectionRow({ mode, memoryIds: ["mem-1"] })))
          expect(error).toBeInstanceOf(TelemetryStore.InvalidTelemetryRow)
          expect(error.message).toContain(`an injection row of a ${mode} projection must not name memories`)
        }
        const negative = yield* Effect.flip(s.appendInjection(injectionRow({ turn: -1 })))
        expect(negative).toBeInstanceOf(TelemetryStore.InvalidTelemetryRow)
        expect((yield* s.listInjections("s-1")).rows).toEqual([])
      })))

    it.effect("stores the row fromProjection builds: the delivered memories and sections", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const projection = ProjectionLayout.composeProjectedContext({
          now: DateTime.unsafeMake(T0),
          workingState: "step 1"
        }, { mode: "native", budget: ProjectionLayout.tokens(16_000) })
        const row = InjectionLog.fromProjection(projection, {
          sessionId: "s-7",
          turn: 4,
          at: DateTime.unsafeMake(T0)
        })
        yield* s.appendInjection(row)
        const [read] = (yield* s.listInjections("s-7")).rows
        expect(read).toMatchObject({ sessionId: "s-7", turn: 4, memoryIds: [], sectionLabels: ["working_state"] })
      })))

    it.effect("reads a prompt snapshot back field for field, with the trajectory it refers to", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const { entries, snapshot } = snapshotFixture({ turn: 2 })
        yield* s.appendSnapshot(snapshot, entries)
        const listed = yield* s.listSnapshots("s-1")
        expect(listed.skipped).toBe(0)
        expect(listed.snapshots.map((x) => encodeSnapshot(x))).toEqual([encodeSnapshot(snapshot)])
        const trajectory = yield* s.readTrajectory("s-1")
        expect(trajectory.skipped).toBe(0)
        expect(trajectory.messages).toEqual(entries.filter((e) => e._tag === "Message"))
        expect(trajectory.blobs).toEqual(entries.filter((e) => e._tag === "Blob"))
        const prefix = trajectory.blobs.find((b) => b.hash === snapshot.prefix.hash)!
        expect(PromptFragment.joinPrompt(Either.getOrThrow(Trajectory.prefixOf(prefix)))).toContain("**name**: Doug")
        expect(yield* s.readTrajectory("nobody")).toEqual(Trajectory.empty)
        expect(yield* s.listSnapshots("nobody")).toEqual({ snapshots: [], skipped: 0 })
      })))

    it.effect("stores each blob once per session and each message position once; lists by turn then call", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        // Twenty turns, two calls each, appended out of order: one prefix, 20 projections, 20 messages.
        for (let turn = 20; turn >= 1; turn--) {
          for (const call of [1, 0]) {
            const { entries, snapshot } = snapshotFixture({ turn, call })
            yield* s.appendSnapshot(snapshot, entries)
          }
        }
        const trajectory = yield* s.readTrajectory("s-1")
        expect(trajectory.blobs.filter((b) => b.kind === "prefix")).toHaveLength(1)
        expect(trajectory.blobs.filter((b) => b.kind === "projection")).toHaveLength(20)
        expect(trajectory.messages.map((m) => m.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i))
        // A later body at a taken position does not replace the first one.
        const other = Trajectory.messageEntry(
          0,
          new SessionStore.OperatorMessage({ text: "rewritten", at: DateTime.unsafeMake(T0) })
        )
        const { entries, snapshot } = snapshotFixture({ turn: 21 })
        yield* s.appendSnapshot(snapshot, [entries[0]!, other, ...entries.slice(2)])
        expect((yield* s.readTrajectory("s-1")).messages[0]).toEqual(entries[1])
        const all = (yield* s.listSnapshots("s-1")).snapshots
        expect(all.map((x) => `${x.turn}.${x.call}`).slice(0, 4)).toEqual(["1.0", "1.1", "2.0", "2.1"])
        expect(all).toHaveLength(41)
        expect((yield* s.listSnapshots("s-1", { turn: 7 })).snapshots.map((x) => x.call)).toEqual([0, 1])
        expect((yield* s.listSnapshots("s-1", { turn: 7, call: 1 })).snapshots.map((x) => [x.turn, x.call])).toEqual([
          [7, 1]
        ])
        expect((yield* s.listSnapshots("s-1", { call: 1 })).snapshots).toHaveLength(20)
      })))

    it.effect("refuses a taken call, a forged entry, a missing blob and an invalid snapshot, storing nothing", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const { entries, snapshot } = snapshotFixture({ turn: 1 })
        yield* s.appendSnapshot(snapshot, entries)
        const before = yield* s.readTrajectory("s-1")

        const again = snapshotFixture({ turn: 1, at: T0 + 5 })
        const duplicate = yield* Effect.flip(s.appendSnapshot(again.snapshot, again.entries))
        expect(duplicate).toBeInstanceOf(TelemetryStore.DuplicateSnapshot)
        expect(duplicate.message).toContain("session s-1, turn 1, call 0 is already stored")

        const next = snapshotFixture({ turn: 2 })
        const forged = next.entries.map((
          e
        ) => (e._tag === "Blob" && e.kind === "projection" ? { ...e, body: "{}" } : e))
        const badHash = yield* Effect.flip(s.appendSnapshot(next.snapshot, forged))
        expect(badHash).toBeInstanceOf(TelemetryStore.InvalidTelemetryRow)
        expect(badHash.message).toContain("is not the SHA-256 of its body")

        const missing = yield* Effect.flip(
          s.appendSnapshot(next.snapshot, next.entries.filter((e) => !(e._tag === "Blob" && e.kind === "prefix")))
        )
        expect(missing.message).toContain("no such prefix blob is among its entries")

        const invalid = new PromptSnapshot.PromptSnapshot({ ...next.snapshot, messages: { input: 5, count: 2 } }, {
          disableValidation: true
        })
        const refused = yield* Effect.flip(s.appendSnapshot(invalid, next.entries))
        expect(refused).toBeInstanceOf(TelemetryStore.InvalidTelemetryRow)

        expect((yield* s.listSnapshots("s-1")).snapshots.map((x) => x.turn)).toEqual([1])
        expect(yield* s.readTrajectory("s-1")).toEqual(before)
      })))

    it.effect("records the usage a provider reported after the call", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const { entries, snapshot } = snapshotFixture({ turn: 1 })
        yield* s.appendSnapshot(snapshot, entries)
        const usage = { inputTokens: 1200, outputTokens: 85, totalTokens: 1285, cachedInputTokens: null }
        expect(yield* s.recordUsage({ sessionId: "s-1", turn: 1, call: 0 }, usage)).toBe(true)
        expect(yield* s.recordUsage({ sessionId: "s-1", turn: 1, call: 9 }, usage)).toBe(false)
        const [read] = (yield* s.listSnapshots("s-1")).snapshots
        expect(read!.usage).toEqual(usage)
        const negative = yield* Effect.flip(
          s.recordUsage({ sessionId: "s-1", turn: 1, call: 0 }, { ...usage, outputTokens: -1 })
        )
        expect(negative).toBeInstanceOf(TelemetryStore.InvalidTelemetryRow)
      })))

    it.effect("prunes whole sessions by age and by count, and nothing else", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        // old: newest snapshot at T0+10; mid: T0+20; new: T0+30 (plus an older call).
        const sessions = [["old", 10], ["mid", 20], ["new", 5], ["new", 30]] as const
        for (const [i, [sessionId, offset]] of sessions.entries()) {
          const { entries, snapshot } = snapshotFixture({ sessionId, turn: i + 1, at: T0 + offset })
          yield* s.appendSnapshot(snapshot, entries)
        }
        yield* s.appendInjection(injectionRow({ sessionId: "old" }))
        expect(yield* s.prune({})).toEqual({ sessions: [], snapshots: 0, entries: 0 })

        const byAge = yield* s.prune({ before: DateTime.unsafeMake(T0 + 11) })
        expect(byAge.sessions).toEqual(["old"])
        expect(byAge.snapshots).toBe(1)
        expect(byAge.entries).toBe(3)
        expect(yield* s.listSnapshots("old")).toEqual({ snapshots: [], skipped: 0 })
        expect(yield* s.readTrajectory("old")).toEqual(Trajectory.empty)
        // The injection log is not the sweep's to touch.
        expect((yield* s.listInjections("old")).rows).toHaveLength(1)

        const byCount = yield* s.prune({ keepSessions: 1 })
        expect(byCount.sessions).toEqual(["mid"])
        expect((yield* s.listSnapshots("new")).snapshots).toHaveLength(2)
        expect((yield* s.readTrajectory("new")).messages.length).toBeGreaterThan(0)
        expect((yield* s.prune({ keepSessions: 0 })).sessions).toEqual(["new"])
      })))

    it.effect("forgetting a memory removes its text from the trajectory and re-points the snapshots", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const bodies = (t: Trajectory.StoredTrajectory) => [...t.messages, ...t.blobs].map((e) => e.body).join("\n")
        // s-1: two turns over a prefix composing mem-1 ("- **name**: Doug"); the second call's
        // operator message and full text hold the content too. s-2: no trace of it.
        const one = snapshotFixture({ turn: 1 })
        yield* s.appendSnapshot(one.snapshot, one.entries)
        const two = snapshotFixture({ turn: 2 })
        const said = Trajectory.messageEntry(
          1,
          new SessionStore.OperatorMessage({
            text: "did you know: Doug likes tea",
            at: DateTime.unsafeMake(T0)
          })
        )
        const withText = new PromptSnapshot.PromptSnapshot({
          ...two.snapshot,
          fullText: {
            text: "[system] - **name**: Doug\n[user] did you know: Doug likes tea",
            bytes: 60,
            truncated: false
          }
        })
        yield* s.appendSnapshot(withText, two.entries.map((e) => (e._tag === "Message" && e.seq === 1 ? said : e)))
        const usage = { inputTokens: 10, outputTokens: 2, totalTokens: 12, cachedInputTokens: null }
        yield* s.recordUsage({ sessionId: "s-1", turn: 2, call: 0 }, usage)
        const other = snapshotFixture({ sessionId: "s-2", turn: 1 })
        const authored = other.entries.map((e) =>
          e._tag === "Blob" && e.kind === "prefix" ?
            Trajectory.prefixBlob([
              { name: "identity", source: "role", fragments: [PromptFragment.authored("You are a careful assistant.")] }
            ]) :
            e
        )
        yield* s.appendSnapshot(
          new PromptSnapshot.PromptSnapshot({
            ...other.snapshot,
            prefix: {
              ...other.snapshot.prefix,
              hash: authored.find((e) => e._tag === "Blob" && e.kind === "prefix")!.hash
            }
          }),
          authored
        )
        const untouched = yield* s.readTrajectory("s-2")
        // s-3: like s-2, but its captured full text quotes the memory.
        const third = snapshotFixture({ sessionId: "s-3", turn: 1 })
        const thirdEntries = third.entries.map((e) =>
          e._tag === "Blob" && e.kind === "prefix" ? authored.find((a) => a._tag === "Blob" && a.kind === "prefix")! : e
        )
        yield* s.appendSnapshot(
          new PromptSnapshot.PromptSnapshot({
            ...third.snapshot,
            prefix: {
              ...third.snapshot.prefix,
              hash: thirdEntries.find((e) => e._tag === "Blob" && e.kind === "prefix")!.hash
            },
            fullText: { text: "[user] Doug asked", bytes: 17, truncated: false }
          }),
          thirdEntries
        )

        // A memory named nowhere changes nothing.
        expect(yield* s.forgetMemories([{ id: "mem-9", content: "Zebras sleep standing" }])).toEqual({
          entries: 0,
          snapshots: 0
        })
        const result = yield* s.forgetMemories([{ id: "mem-1", content: "Doug" }])
        // The prefix blob (once for the session) and the message holding the content; s-1's two
        // snapshots and s-3's, whose full text quoted it.
        expect(result).toEqual({ entries: 2, snapshots: 3 })

        const trajectory = yield* s.readTrajectory("s-1")
        expect(trajectory.skipped).toBe(0)
        expect(bodies(trajectory)).not.toContain("Doug")
        expect(trajectory.blobs.filter((b) => b.kind === "prefix")).toHaveLength(1)
        const [prefix] = trajectory.blobs.filter((b) => b.kind === "prefix")
        const sections = Either.getOrThrow(Trajectory.prefixOf(prefix!))
        expect(sections[1]!.fragments[1]).toEqual(PromptFragment.memory(Trajectory.FORGOTTEN, ["mem-1"]))
        expect(Either.getOrThrow(Trajectory.messageOf(trajectory.messages[1]!))).toMatchObject({
          text: `did you know: ${Trajectory.FORGOTTEN} likes tea`
        })

        const { snapshots } = yield* s.listSnapshots("s-1")
        expect(snapshots.map((x) => x.redacted)).toEqual([["mem-1"], ["mem-1"]])
        for (const x of snapshots) expect(x.prefix.hash).toBe(prefix!.hash)
        expect(snapshots[1]!.fullText!.text).toBe(
          `[system] - **name**: ${Trajectory.FORGOTTEN}\n[user] did you know: ${Trajectory.FORGOTTEN} likes tea`
        )
        expect(snapshots[1]!.usage).toEqual(usage)
        // Another session's trajectory and snapshot are left as they were.
        expect(yield* s.readTrajectory("s-2")).toEqual(untouched)
        expect((yield* s.listSnapshots("s-2")).snapshots.map((x) => x.redacted)).toEqual([[]])
        const [quoted] = (yield* s.listSnapshots("s-3")).snapshots
        expect([quoted!.redacted, quoted!.fullText!.text]).toEqual([["mem-1"], `[user] ${Trajectory.FORGOTTEN} asked`])
        // Forgetting again finds nothing more to remove.
        expect(yield* s.forgetMemories([{ id: "mem-1", content: "Doug" }])).toEqual({ entries: 0, snapshots: 0 })
      })))

    it.effect("forget finds a memory's text however many entries the store holds", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        // One call whose history is 1,200 messages; only #1,100 quotes the memory.
        const { entries, snapshot } = snapshotFixture({ turn: 1 })
        const count = 1_200
        const messages = Array.from(
          { length: count },
          (_, seq) =>
            Trajectory.messageEntry(
              seq,
              new SessionStore.OperatorMessage({
                text: seq === 1_100 ? "remember: the gate code is 8812" : `question ${seq}`,
                at: DateTime.unsafeMake(T0)
              })
            )
        )
        yield* s.appendSnapshot(
          new PromptSnapshot.PromptSnapshot({ ...snapshot, messages: { input: count - 1, count } }),
          [...entries.filter((e) => e._tag === "Blob"), ...messages]
        )
        const result = yield* s.forgetMemories([{ id: "mem-77", content: "the gate code is 8812" }])
        expect(result).toEqual({ entries: 1, snapshots: 1 })
        const trajectory = yield* s.readTrajectory("s-1")
        expect(trajectory.messages).toHaveLength(count)
        expect(Either.getOrThrow(Trajectory.messageOf(trajectory.messages[1_100]!))).toMatchObject({
          text: `remember: ${Trajectory.FORGOTTEN}`
        })
        expect((yield* s.listSnapshots("s-1")).snapshots[0]!.redacted).toEqual(["mem-77"])
      })))
  })
}
