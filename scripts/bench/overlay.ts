/**
 * `npm run bench -- overlay [--records 10000] [--runs 30]`
 *
 * Overlay half: `applyMemoryOverlay` over N placed records (default 10,000) against a Background
 * of 24 declared sections (every promotion tier, some authored entries), with the default budget
 * and with no budget at all — the second composes every admissible record, so it measures the
 * fold and the layout at their largest. Records collide on addresses and timestamps, and cover
 * every review and lifecycle state, so every decline path runs. Data comes from a fixed seed.
 *
 * Save-gate half (`--lookups 2000`): the gate's exact `placementKey` lookup on SQLite at 1,000 and
 * 100,000 promotion rows. Each size gets a fresh database file in the OS temp dir holding that many
 * memory records and promotion rows (ten scopes, about four rows per address, a mix of live and
 * superseded holders); then `SaveGate.liveHolders` — the promotion store's indexed lookup plus the
 * read of the records it names — is timed for random addresses, and so is the bare
 * `PromotionStore.lookup`. The ratio of the medians (100k / 1k) must stay at or below 1.5: the
 * lookup is indexed, so its cost must not grow with the number of rows.
 */
import { Background, MemoryOverlay, MemoryRecord, MemoryStore, PromotionStore, Routing } from "@engram/core"
import { SaveGate } from "@engram/runtime"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore } from "@engram/store-sqlite"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { prng } from "../lib/prng.js"

const TIERS = ["auto", "auto", "auto", "guarded", "guarded", "locked", "earned"] as const
const WORDS = (
  "user prefers tea mornings lives oslo works remote team lead deploys friday never weekends timezone cet " +
  "likes jazz cat named tom allergic peanuts birthday june project alpha postgres migration reviewed " +
  "always answer briefly british spelling dark mode vim keybindings"
).split(" ")

const NOW = DateTime.unsafeMake(Date.UTC(2026, 0, 1))

const spec: Routing.MemoryRoutingSpec = {
  key: "bench",
  version: "1",
  route: () => null,
  finalize: Routing.finalizeOldestFirst
}

/** The declared Background: 24 sections over every tier, each with two authored entries. */
export const benchBackground = (): Background.Background =>
  Background.unsafeMake({
    sections: Array.from({ length: 24 }, (_, i) => ({
      id: `section_${i}`,
      title: `Section ${i}`,
      promotion: TIERS[i % TIERS.length]!,
      entries: [
        { key: `authored_${i}_a`, value: `authored value ${i}` },
        { key: "key_1", value: i }
      ]
    }))
  })

/** `count` placed records, deterministic: colliding addresses and timestamps, every state. */
export const benchPlaced = (count: number, seed = 1): ReadonlyArray<Routing.PlacedRecord> => {
  const random = prng(seed)
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(random() * items.length)]!
  const base = DateTime.toEpochMillis(NOW) - 86_400_000 * 30
  return Array.from({ length: count }, (_, i) => {
    const roll = random()
    const createdAt = DateTime.unsafeMake(base + Math.floor(random() * 2_000) * 1_000)
    const record = new MemoryRecord.MemoryRecord(
      {
        id: `mem-${String(i).padStart(6, "0")}`,
        content: Array.from({ length: 6 + Math.floor(random() * 14) }, () => pick(WORDS)).join(" "),
        kind: "profile",
        tags: [],
        sourceType: "conversation",
        scope: "global",
        deliveryPolicy: "retrieved",
        reviewState: roll < 0.05 ? "rejected" : roll < 0.55 ? "confirmed" : "pending",
        createdAt,
        ...(roll > 0.97 ? { invalidatedAt: createdAt, supersededBy: "mem-999999" } : {}),
        ...(roll > 0.93 && roll <= 0.97
          ? { expiresAt: DateTime.unsafeMake(DateTime.toEpochMillis(NOW) + (random() < 0.5 ? -1 : 1) * 3_600_000) }
          : {})
      },
      { disableValidation: true }
    )
    if (random() < 0.03) {
      return {
        record,
        placement: null,
        placementKey: null,
        keySource: null,
        specKey: spec.key,
        specVersion: spec.version,
        promotedAt: NOW,
        tier: null
      }
    }
    // 26 section ids (two undeclared) and ~400 keys per section: many records share an address.
    const placement = Routing.background(`section_${Math.floor(random() * 26)}`, `key_${Math.floor(random() * 400)}`)
    return {
      record,
      placement,
      placementKey: Routing.placementKey(placement),
      keySource: "label" as const,
      specKey: spec.key,
      specVersion: spec.version,
      promotedAt: NOW,
      tier: "auto" as const
    }
  })
}

const percentile = (sorted: ReadonlyArray<number>, p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!

/** Figures for one overlay configuration. */
export interface OverlayFigures {
  readonly label: string
  readonly records: number
  readonly composed: number
  readonly declined: number
  readonly composedChars: number
  readonly p50: number
  readonly p95: number
  readonly min: number
  readonly orderIndependent: boolean
}

/** Times `applyMemoryOverlay` over `placed` with `budget`, `runs` times after a warm-up. */
export const benchOverlay = (
  label: string,
  background: Background.Background,
  placed: ReadonlyArray<Routing.PlacedRecord>,
  budget: MemoryOverlay.OverlayBudget | undefined,
  runs: number
): OverlayFigures => {
  const options = { now: NOW, budget }
  for (let i = 0; i < 5; i++) MemoryOverlay.applyMemoryOverlay(background, placed, spec, options)
  const times: Array<number> = []
  let result = MemoryOverlay.applyMemoryOverlay(background, placed, spec, options)
  for (let i = 0; i < runs; i++) {
    const start = performance.now()
    result = MemoryOverlay.applyMemoryOverlay(background, placed, spec, options)
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  const reversed = MemoryOverlay.applyMemoryOverlay(background, [...placed].reverse(), spec, options)
  const composed = MemoryOverlay.composedIds(result.report).length
  return {
    label,
    records: placed.length,
    composed,
    declined: result.report.outcomes.length - composed,
    composedChars: MemoryOverlay.composedChars(result.report).total,
    p50: percentile(times, 0.5),
    p95: percentile(times, 0.95),
    min: times[0]!,
    orderIndependent:
      Background.renderBackground(reversed.background) === Background.renderBackground(result.background) &&
      JSON.stringify(reversed.report) === JSON.stringify(result.report)
  }
}

const option = (args: ReadonlyArray<string>, name: string): string | undefined => {
  const index = args.indexOf(name)
  return index >= 0 ? args[index + 1] : undefined
}

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((cell, i) => cell.padStart(widths[i]!)).join("  ")
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n")
}

/** Figures for the save gate's lookup at one store size. */
export interface GateFigures {
  readonly rows: number
  readonly lookups: number
  readonly rowsPerLookup: number
  readonly gateP50: number
  readonly gateP95: number
  readonly lookupP50: number
  readonly lookupP95: number
}

const GATE_SCOPES = ["global", ...Array.from({ length: 9 }, (_, i) => `project:p${i}`)]

/**
 * Builds a SQLite store with `rows` memory records and as many promotion rows, then times
 * `lookups` save-gate lookups at random addresses (after a warm-up).
 */
export const benchGateLookup = async (rows: number, lookups: number, seed = 7): Promise<GateFigures> => {
  const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-bench-gate-"))
  const stores = SqlitePromotionStore.layer.pipe(
    Layer.provideMerge(
      SqliteEngram.layerStores().pipe(
        Layer.provideMerge(SqliteDatabase.layer({ filename: NodePath.join(directory, "bench.db") }))
      )
    )
  )
  const random = prng(seed)
  // About four rows per address, in every scope alike, whatever the size.
  const keysPerScope = Math.max(1, Math.floor(rows / GATE_SCOPES.length / 4))
  const sections = ["about_user", "preferences", "project_state", "conventions"]
  const addressOf = (i: number) =>
    Routing.background(sections[i % sections.length]!, `key_${Math.floor(i / sections.length)}`)
  const program = Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const promotions = yield* PromotionStore.PromotionStore
    const at = DateTime.unsafeMake(Date.UTC(2026, 0, 1))
    const batch = 5_000
    for (let start = 0; start < rows; start += batch) {
      const size = Math.min(batch, rows - start)
      const records = Array.from({ length: size }, (_, j) => {
        const i = start + j
        const scope = GATE_SCOPES[i % GATE_SCOPES.length]!
        const superseded = random() < 0.5
        return new MemoryRecord.MemoryRecord({
          id: `gate-${String(i).padStart(7, "0")}`,
          content: `remembered value ${i}`,
          kind: "profile",
          label: `key ${i}`,
          tags: [],
          sourceType: "conversation",
          scope,
          deliveryPolicy: "retrieved",
          reviewState: "pending",
          createdAt: DateTime.unsafeMake(DateTime.toEpochMillis(at) + i),
          ...(superseded
            ? { invalidatedAt: at, invalidationReason: "superseded_by:gate-x", supersededBy: "gate-x" }
            : {})
        })
      })
      yield* memories.restore(records)
      yield* promotions.commit(records.map((record) => {
        const placement = addressOf(Math.floor(random() * keysPerScope))
        return {
          recordId: record.id,
          scope: record.scope,
          placement,
          placementKey: Routing.placementKey(placement),
          keySource: "label" as const,
          specKey: spec.key,
          specVersion: spec.version,
          promotedAt: at,
          tier: "auto" as const
        }
      }))
    }
    const probe = () => ({
      scope: GATE_SCOPES[Math.floor(random() * GATE_SCOPES.length)]!,
      placementKey: Routing.placementKey(addressOf(Math.floor(random() * keysPerScope))),
      specKey: spec.key
    })
    const time = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.gen(function*() {
        const start = performance.now()
        const value = yield* self
        return { value, ms: performance.now() - start }
      })
    for (let i = 0; i < 200; i++) yield* SaveGate.liveHolders(probe())
    const gate: Array<number> = []
    const bare: Array<number> = []
    let found = 0
    for (let i = 0; i < lookups; i++) {
      const target = probe()
      const timed = yield* time(SaveGate.liveHolders(target))
      gate.push(timed.ms)
      const raw = yield* time(promotions.lookup(target.scope, target.placementKey, { specKey: target.specKey }))
      bare.push(raw.ms)
      found += raw.value.rows.length
    }
    gate.sort((a, b) => a - b)
    bare.sort((a, b) => a - b)
    return {
      rows,
      lookups,
      rowsPerLookup: found / lookups,
      gateP50: percentile(gate, 0.5),
      gateP95: percentile(gate, 0.95),
      lookupP50: percentile(bare, 0.5),
      lookupP95: percentile(bare, 0.95)
    }
  })
  try {
    return await Effect.runPromise(Effect.provide(program, stores))
  } finally {
    NodeFs.rmSync(directory, { recursive: true, force: true })
  }
}

/** Runs the overlay benchmark and prints its figures. */
export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const count = Number(option(args, "--records") ?? "10000")
  const runs = Number(option(args, "--runs") ?? "30")
  const lookups = Number(option(args, "--lookups") ?? "2000")
  const background = benchBackground()
  const placed = benchPlaced(count)
  const figures = [
    benchOverlay("default budget", background, placed, undefined, runs),
    benchOverlay("no budget", background, placed, { totalChars: Infinity, sectionChars: Infinity }, runs)
  ]
  console.log(
    `applyMemoryOverlay — ${
      count.toLocaleString("en-US")
    } placed records, ${background.sections.length} sections, ${runs} runs\n`
  )
  console.log(table(
    ["budget", "records", "composed", "declined", "chars", "p50 ms", "p95 ms", "min ms", "order-independent"],
    figures.map((f) => [
      f.label,
      f.records.toLocaleString("en-US"),
      f.composed.toLocaleString("en-US"),
      f.declined.toLocaleString("en-US"),
      f.composedChars.toLocaleString("en-US"),
      f.p50.toFixed(2),
      f.p95.toFixed(2),
      f.min.toFixed(2),
      f.orderIndependent ? "yes" : "NO"
    ])
  ))
  console.log(
    `\nDefault budget: ${MemoryOverlay.DEFAULT_SECTION_BUDGET_CHARS} chars per section, ` +
      `${MemoryOverlay.DEFAULT_TOTAL_BUDGET_CHARS} overall. "order-independent": the reversed input gives identical output.`
  )

  const small = await benchGateLookup(1_000, lookups)
  const large = await benchGateLookup(100_000, lookups)
  console.log(
    `\nSave gate — exact placementKey lookup on SQLite, ${lookups.toLocaleString("en-US")} lookups per size\n`
  )
  console.log(table(
    ["promotion rows", "rows/lookup", "gate p50 ms", "gate p95 ms", "lookup p50 ms", "lookup p95 ms"],
    [small, large].map((f) => [
      f.rows.toLocaleString("en-US"),
      f.rowsPerLookup.toFixed(1),
      f.gateP50.toFixed(3),
      f.gateP95.toFixed(3),
      f.lookupP50.toFixed(3),
      f.lookupP95.toFixed(3)
    ])
  ))
  const gateRatio = large.gateP50 / small.gateP50
  const lookupRatio = large.lookupP50 / small.lookupP50
  console.log(
    `\nratio 100k / 1k (p50): gate ${gateRatio.toFixed(2)}, bare lookup ${lookupRatio.toFixed(2)} — target ≤ 1.5: ` +
      (gateRatio <= 1.5 ? "flat" : "NOT FLAT")
  )
  console.log(
    `"gate" is SaveGate.liveHolders (promotion-row lookup + reading the records it names); ` +
      `"lookup" is PromotionStore.lookup alone.`
  )
}
