/**
 * What the `engram` command prints: a compact human view, or JSON documents whose records are
 * encoded with {@link MemoryRecord.MemoryRecord}'s own schema plus the derived `trustTier`.
 * Pure functions from results to text; the commands print what they return.
 *
 * @since 0.1.0
 */
import * as InstructionScreen from "@engram/core/InstructionScreen"
import * as MemoryQuery from "@engram/core/MemoryQuery"
import type * as MemoryRecord from "@engram/core/MemoryRecord"
import type * as MemoryStore from "@engram/core/MemoryStore"
import * as MemoryWrite from "@engram/core/MemoryWrite"
import * as TextSafety from "@engram/core/TextSafety"
import * as TurnProvenance from "@engram/core/TurnProvenance"
import type * as LegacyImport from "@engram/store-sqlite/LegacyImport"
import * as DateTime from "effect/DateTime"

/**
 * A record as `--json` prints it: the schema's encoded form (ISO timestamps) and `trustTier`.
 *
 * @since 0.1.0
 * @category json
 */
export type JsonRecord = typeof MemoryRecord.MemoryRecord.Encoded & {
  readonly trustTier: MemoryRecord.TrustTier
  /** Whether the poisoning screen flags it (derived, like `trustTier`). */
  readonly flagged: boolean
  /** The session and turns it was drawn from, when it names them (`TurnProvenance`). */
  readonly source?: TurnProvenance.TurnSource
}

/**
 * Encodes a record for `--json`.
 *
 * @since 0.1.0
 * @category json
 */
export const jsonRecord = (record: MemoryRecord.MemoryRecord): JsonRecord => ({
  ...MemoryWrite.encodeStoredRecord(record),
  trustTier: record.trustTier,
  flagged: record.flagged,
  ...sourceOf(record)
})

const sourceOf = (record: MemoryRecord.MemoryRecord): { readonly source?: TurnProvenance.TurnSource } => {
  const source = TurnProvenance.of(record)
  return source === undefined ? {} : { source }
}

const provenanceLines = (record: MemoryRecord.MemoryRecord): ReadonlyArray<string> => {
  const from = TurnProvenance.describe(record)
  const reasons = InstructionScreen.screen(record.content).reasons
  return [
    ...(from !== undefined ? [`from        ${escapeControls(from)}`] : []),
    ...(record.flagged ? [`flagged     reads as an instruction to the agent (${reasons.join(", ") || "label"})`] : [])
  ]
}

/**
 * Serialises a JSON document for stdout (two-space indented).
 *
 * @since 0.1.0
 * @category json
 */
export const json = (document: unknown): string => JSON.stringify(document, null, 2)

/**
 * The lifecycle state shown for a record: `active`, `superseded`, `invalidated` or `expired`.
 *
 * @since 0.1.0
 * @category human
 */
export const lifecycleOf = (record: MemoryRecord.MemoryRecord, now: DateTime.Utc): string => {
  if (record.supersededBy !== undefined) return "superseded"
  if (MemoryQuery.isInvalidated(record)) return "invalidated"
  if (MemoryQuery.isExpired(record, now)) return "expired"
  return "active"
}

/**
 * Shortens text to one line of at most `width` characters, ending in `…` when cut.
 *
 * @since 0.1.0
 * @category human
 */
export const truncate = (text: string, width: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  const chars = Array.from(flat)
  return chars.length <= width ? flat : `${chars.slice(0, Math.max(0, width - 1)).join("")}…`
}

const CONTENT_WIDTH = 60
const LABEL_WIDTH = 24

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(Array.from(h).length, ...rows.map((r) => Array.from(r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell + " ".repeat(widths[i]! - Array.from(cell).length)))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}

const recordCells = (record: MemoryRecord.MemoryRecord, now: DateTime.Utc): ReadonlyArray<string> => [
  record.id,
  record.kind,
  record.reviewState,
  lifecycleOf(record, now),
  record.scope,
  truncate(record.label ?? "-", LABEL_WIDTH),
  truncate(record.content, CONTENT_WIDTH)
]

const recordHeader = ["ID", "KIND", "REVIEW", "STATE", "SCOPE", "LABEL", "CONTENT"]

/**
 * Records as a table: id, kind, review state, lifecycle state, scope, label and content.
 *
 * @since 0.1.0
 * @category human
 */
export const recordTable = (records: ReadonlyArray<MemoryRecord.MemoryRecord>, now: DateTime.Utc): string =>
  table(recordHeader, records.map((r) => recordCells(r, now)))

const skippedLine = (skipped: number): ReadonlyArray<string> =>
  skipped === 0
    ? []
    : [`skipped ${skipped} stored row${skipped === 1 ? "" : "s"} that could not be read (details: --log-level warning)`]

const countOf = (n: number) => (n === 1 ? "1 memory" : `${n} memories`)

/**
 * A listing page: the table, how many records it holds, skipped rows and the next cursor.
 *
 * @since 0.1.0
 * @category human
 */
export const listPage = (page: MemoryStore.ListPage, now: DateTime.Utc): string =>
  [
    ...(page.records.length === 0
      ? ["no memories match"]
      : [recordTable(page.records, now), "", countOf(page.records.length)]),
    ...skippedLine(page.skipped),
    ...(page.nextCursor !== undefined ? [`more: --cursor ${page.nextCursor}`] : [])
  ].join("\n")

/**
 * Search hits, best first, numbered by rank, and any skipped rows. Scores are left to `--json`:
 * each backend scores differently, and only the order within one result means anything.
 *
 * @since 0.1.0
 * @category human
 */
export const searchResult = (result: MemoryStore.SearchResult, now: DateTime.Utc): string =>
  [
    ...(result.hits.length === 0
      ? ["no memories match"]
      : [
        table(
          ["#", ...recordHeader],
          result.hits.map((hit, i) => [String(i + 1), ...recordCells(hit.record, now)])
        )
      ]),
    ...skippedLine(result.skipped)
  ].join("\n")

const optionalLines = (record: MemoryRecord.MemoryRecord): ReadonlyArray<string> => {
  const lines: Array<string> = []
  if (record.label !== undefined) lines.push(`label       ${record.label}`)
  if (record.tags.length > 0) lines.push(`tags        ${record.tags.join(", ")}`)
  if (record.epoch !== undefined) lines.push(`epoch       ${record.epoch}`)
  if (record.expiresAt !== undefined) lines.push(`expires     ${DateTime.formatIso(record.expiresAt)}`)
  if (record.invalidatedAt !== undefined) {
    lines.push(`invalidated ${DateTime.formatIso(record.invalidatedAt)} (${record.invalidationReason ?? "no reason"})`)
  }
  if (record.supersedes !== undefined) lines.push(`supersedes  ${record.supersedes}`)
  if (record.domain !== undefined) lines.push(`domain      ${record.domain}`)
  return lines
}

/**
 * One record in full: every attribute on its own line.
 *
 * @since 0.1.0
 * @category human
 */
export const recordDetail = (record: MemoryRecord.MemoryRecord, now: DateTime.Utc): string =>
  [
    `id          ${record.id}`,
    `kind        ${record.kind}`,
    `content     ${truncate(record.content, 200)}`,
    `source      ${record.sourceType} (trust tier ${record.trustTier})`,
    `review      ${record.reviewState}`,
    `state       ${lifecycleOf(record, now)}`,
    `scope       ${record.scope}`,
    `delivery    ${record.deliveryPolicy}`,
    `created     ${DateTime.formatIso(record.createdAt)}`,
    ...(MemoryQuery.describeValidity(record) !== null ? [`valid       ${MemoryQuery.describeValidity(record)}`] : []),
    ...(MemoryQuery.describeCorroboration(record) !== null
      ? [`corroborated ${MemoryQuery.describeCorroboration(record)}`]
      : []),
    ...provenanceLines(record),
    ...optionalLines(record)
  ].join("\n")

/**
 * What a legacy import did: the summary line (`LegacyImport.describeReport`, given by the caller, which
 * has the import module loaded), records by kind, and every skipped row.
 *
 * @since 0.1.0
 * @category human
 */
export const importReport = (report: LegacyImport.LegacyImportReport, summary: string): string => {
  const kinds = Object.entries(report.kinds)
    .sort(([a], [b]) => MemoryQuery.compareRaw(a, b))
    .map(([kind, n]) => `${kind} ${n}`)
  return [
    summary,
    ...(report.alreadyImported || kinds.length === 0 ? [] : [`by kind: ${kinds.join(", ")}`]),
    ...(report.alreadyImported || report.invalidated === 0
      ? []
      : [`${report.invalidated} imported as superseded or invalidated (see memory list --include-superseded)`]),
    ...report.skippedRows.map((row) => `skipped row ${row.rowid}: ${row.reason}`)
  ].join("\n")
}

/**
 * Text fit for the terminal: stored escape sequences and other invisible or reordering
 * characters shown as visible `\u{…}` escapes (`TextSafety.escapeForTerminal`). Every human-readable
 * line the CLI prints passes through it.
 *
 * @since 0.1.0
 * @category formatting
 */
export const escapeControls = (text: string): string => TextSafety.escapeForTerminal(text)
