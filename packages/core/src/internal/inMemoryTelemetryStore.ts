import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { decodeStoredInjectionRow, encodeInjectionRow, type InjectionLogRow } from "../InjectionLog.js"
import * as PromptSnapshot from "../PromptSnapshot.js"
import { sortSessionIds } from "../SessionStore.js"
import { planForget, redactSnapshot } from "../TelemetryRedaction.js"
import type { Service as TelemetryStoreService, SnapshotFilter } from "../TelemetryStore.js"
import * as Trajectory from "../Trajectory.js"
import { DuplicateSnapshot, encodeUsage, prepareSnapshot, sessionsToPrune } from "./telemetryRows.js"

/**
 * The in-memory telemetry store. Rows are kept encoded and decoded on read, as a database
 * backend would.
 */
export const make = (): TelemetryStoreService => {
  const rows: Array<{ readonly sessionId: string; readonly encoded: unknown }> = []
  let snapshots: Array<{ readonly sessionId: string; readonly key: string; encoded: Record<string, unknown> }> = []
  let entries: Array<{ readonly sessionId: string; readonly key: string; readonly encoded: unknown }> = []
  const snapshotKey = (key: PromptSnapshot.SnapshotKey) => `${key.turn}/${key.call}`
  const entryKey = (entry: Trajectory.TrajectoryEntry) =>
    entry._tag === "Message" ? `m/${entry.seq}` : `b/${entry.kind}/${entry.hash}`
  const decodeSnapshots = (sessionId: string, filter: SnapshotFilter) => {
    const out: Array<PromptSnapshot.PromptSnapshot> = []
    let skipped = 0
    for (const row of snapshots) {
      if (row.sessionId !== sessionId) continue
      const decoded = PromptSnapshot.decodeStored(row.encoded)
      if (Either.isLeft(decoded)) {
        skipped++
        continue
      }
      const s = decoded.right
      if (
        (filter.turn === undefined || s.turn === filter.turn) && (filter.call === undefined || s.call === filter.call)
      ) {
        out.push(s)
      }
    }
    out.sort((a, b) => a.turn - b.turn || a.call - b.call)
    return { snapshots: out, skipped }
  }
  return {
    appendSnapshot: (snapshot, given) =>
      Effect.flatMap(prepareSnapshot(snapshot, given), ({ encoded, entries: checked }) => {
        const key = snapshotKey(snapshot)
        if (snapshots.some((row) => row.sessionId === snapshot.sessionId && row.key === key)) {
          return Effect.fail(
            new DuplicateSnapshot({ sessionId: snapshot.sessionId, turn: snapshot.turn, call: snapshot.call })
          )
        }
        return Effect.sync(() => {
          for (const entry of checked) {
            const k = entryKey(entry)
            if (!entries.some((row) => row.sessionId === snapshot.sessionId && row.key === k)) {
              entries.push({ sessionId: snapshot.sessionId, key: k, encoded: entry })
            }
          }
          snapshots.push({ sessionId: snapshot.sessionId, key, encoded })
        })
      }),
    listSnapshots: (sessionId, filter = {}) => Effect.sync(() => decodeSnapshots(sessionId, filter)),
    readTrajectory: (sessionId) =>
      Effect.sync(() => {
        const decoded: Array<Trajectory.TrajectoryEntry> = []
        let skipped = 0
        for (const row of entries) {
          if (row.sessionId !== sessionId) continue
          const entry = Trajectory.decodeStoredEntry(row.encoded)
          if (Either.isLeft(entry)) skipped++
          else decoded.push(entry.right)
        }
        return Trajectory.collect(decoded, skipped)
      }),
    recordUsage: (key, usage) =>
      Effect.map(encodeUsage(usage), (encoded) => {
        const k = snapshotKey(key)
        const row = snapshots.find((r) => r.sessionId === key.sessionId && r.key === k)
        if (row === undefined) return false
        row.encoded = { ...row.encoded, usage: encoded }
        return true
      }),
    prune: (request) =>
      Effect.sync(() => {
        const latest = new Map<string, number>()
        for (const row of snapshots) {
          const at = Date.parse(String(row.encoded.at))
          latest.set(row.sessionId, Math.max(latest.get(row.sessionId) ?? -Infinity, at))
        }
        const gone = new Set(
          sessionsToPrune([...latest].map(([sessionId, at]) => ({ sessionId, at })), request, DateTime.toEpochMillis)
        )
        const before = { snapshots: snapshots.length, entries: entries.length }
        snapshots = snapshots.filter((row) => !gone.has(row.sessionId))
        entries = entries.filter((row) => !gone.has(row.sessionId))
        return {
          sessions: sortSessionIds(gone),
          snapshots: before.snapshots - snapshots.length,
          entries: before.entries - entries.length
        }
      }),
    forgetMemories: (forgotten) =>
      Effect.sync(() => {
        if (forgotten.length === 0) return { entries: 0, snapshots: 0 }
        const decoded = entries.flatMap((row, key) => {
          const entry = Trajectory.decodeStoredEntry(row.encoded)
          return Either.isRight(entry) ? [{ key, sessionId: row.sessionId, entry: entry.right }] : []
        })
        const plan = planForget(decoded, forgotten)
        const next = [...entries]
        for (const change of plan.changed) {
          const k = entryKey(change.after)
          const taken = next.some((row, i) => i !== change.key && row.sessionId === change.sessionId && row.key === k)
          next[change.key] = taken
            ? { sessionId: "", key: "", encoded: null } // the redacted body is already stored: drop this copy
            : { sessionId: change.sessionId, key: k, encoded: change.after }
        }
        entries = next.filter((row) => row.sessionId !== "")
        let updated = 0
        for (const row of snapshots) {
          const decodedSnapshot = PromptSnapshot.decodeStored(row.encoded)
          if (Either.isLeft(decodedSnapshot)) continue
          const redacted = redactSnapshot(decodedSnapshot.right, plan, forgotten)
          if (redacted === undefined) continue
          const encoded = PromptSnapshot.encode(redacted)
          if (Either.isRight(encoded)) {
            row.encoded = encoded.right as unknown as Record<string, unknown>
            updated++
          }
        }
        return { entries: plan.changed.length, snapshots: updated }
      }),
    appendInjection: (row) =>
      Effect.map(encodeInjectionRow(row), (encoded) => void rows.push({ sessionId: row.sessionId, encoded })),
    listInjections: (sessionId) =>
      Effect.sync(() => {
        const out: Array<InjectionLogRow> = []
        let skipped = 0
        for (const row of rows) {
          if (row.sessionId !== sessionId) continue
          const decoded = decodeStoredInjectionRow(row.encoded)
          if (Either.isRight(decoded)) out.push(decoded.right)
          else skipped++
        }
        return { rows: out, skipped }
      }),
    listSessions: () => Effect.sync(() => sortSessionIds(rows.map((row) => row.sessionId)))
  }
}
