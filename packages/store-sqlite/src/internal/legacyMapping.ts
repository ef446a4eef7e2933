/**
 * The pure part of the legacy import: how one v1 `chunks` row becomes a memory record.
 */
import { InstructionScreen, MemoryRecord, MemoryWrite } from "@engram/core"
import * as Either from "effect/Either"

/** Columns every v1 `chunks` table has. */
export const REQUIRED_COLUMNS = [
  "content",
  "domain",
  "source_type",
  "namespace",
  "epoch",
  "invalidated_at",
  "invalidation_reason",
  "created_at"
] as const

/**
 * Columns later v1 versions added. When present and holding a valid value they win over what
 * would be derived: an operator's `rejected` stays rejected, an explicit kind stays that kind.
 */
export const OPTIONAL_COLUMNS = ["id", "memory_kind", "delivery_policy", "review_state", "expires_at"] as const

/** A v1 row as read, keyed by column name, with its rowid. */
export interface LegacyRow {
  readonly rowid: number
  readonly [column: string]: unknown
}

/** The id an imported row gets: stable across imports of the same source. */
export const legacyId = (rowid: number): string => `legacy-${rowid}`

const normalized = (value: unknown): string | undefined =>
  typeof value === "string" ? value.trim().toLowerCase() : undefined

/** D4's backfill table: the kind a v1 `domain` (and, for "general", `source_type`) maps to. */
export const kindOf = (domain: unknown, sourceType: unknown): MemoryRecord.MemoryKind => {
  switch (normalized(domain)) {
    case "hot":
      return "standing"
    case "preferences":
      return "profile"
    case "general":
      return normalized(sourceType) === "conversation" ? "note" : "reference"
    case "finding":
    case "fact":
      return "fact"
    case "conversation":
      return "note"
    default:
      return "legacy"
  }
}

/** `hot` rows reach every turn; everything else only on a retrieval match. */
export const deliveryPolicyOf = (domain: unknown): MemoryRecord.DeliveryPolicy =>
  normalized(domain) === "hot" ? "always" : "retrieved"

const sourceTypes: ReadonlyArray<string> = MemoryRecord.SourceType.literals

/** A recognised provenance, or `unknown`. */
export const sourceTypeOf = (value: unknown): MemoryRecord.SourceType => {
  const source = normalized(value)
  return source !== undefined && sourceTypes.includes(source) ? (source as MemoryRecord.SourceType) : "unknown"
}

const isScope = (value: string): boolean => /^(global|(project|session):[^\s\p{Cc}]{1,200})$/u.test(value)
const scopeId = (value: string): string => value.replace(/[\s\p{Cc}]+/gu, "_").slice(0, 200)

/**
 * The scope a v1 namespace maps to. Empty (or `global`) is global; a valid `project:<id>` or
 * `session:<id>` is kept. Anything else stays isolated rather than leaking into global: a
 * `project:`/`session:` prefix keeps its kind with whitespace and control characters in the id
 * replaced by `_`; any other namespace becomes the project named after it (`team-a` →
 * `project:team-a`).
 */
export const scopeOf = (namespace: unknown): MemoryRecord.Scope => {
  const text = typeof namespace === "number" ? String(namespace) : typeof namespace === "string" ? namespace.trim() : ""
  if (text === "" || text.toLowerCase() === "global") return "global"
  if (isScope(text)) return text
  const prefixed = /^(project|session):(.*)$/su.exec(text)
  if (prefixed !== null && scopeId(prefixed[2]!.trim()) !== "") return `${prefixed[1]}:${scopeId(prefixed[2]!.trim())}`
  return `project:${scopeId(text)}`
}

const MAX_SECONDS = 100_000_000_000

/**
 * A v1 timestamp in epoch milliseconds: numbers (seconds below 10^11, milliseconds above), ISO
 * 8601 text or SQLite's `YYYY-MM-DD HH:MM:SS`, UTC unless an offset is given. `undefined` when
 * absent or unreadable.
 */
export const timestampOf = (value: unknown): number | undefined => {
  if (typeof value === "bigint") return timestampOf(Number(value))
  if (typeof value === "number") {
    if (!Number.isFinite(value)) return undefined
    const millis = Math.round(Math.abs(value) < MAX_SECONDS ? value * 1000 : value)
    return Math.abs(millis) <= 8_640_000_000_000_000 ? millis : undefined
  }
  if (typeof value !== "string") return undefined
  const text = value.trim()
  if (text === "") return undefined
  if (/^-?\d+(\.\d+)?$/.test(text)) return timestampOf(Number(text))
  const match = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)\s*(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(text)
  if (match === null) return undefined
  const [, date, time, zone] = match
  const offset = zone === undefined || zone.toUpperCase() === "Z" ? "Z" : `${zone.slice(0, 3)}:${zone.slice(-2)}`
  const millis = Date.parse(`${date}T${time ?? "00:00"}${offset}`)
  return Number.isNaN(millis) ? undefined : millis
}

const oneLine = (value: unknown): string | undefined => {
  if (value === null || value === undefined) return undefined
  const text = String(value).replace(/[\p{Cc}\u2028\u2029]+/gu, " ").trim()
  return text === "" ? undefined : text
}

const literalOf = <A extends string>(literals: ReadonlyArray<A>, value: unknown): A | undefined => {
  const text = normalized(value)
  return text !== undefined && (literals as ReadonlyArray<string>).includes(text) ? (text as A) : undefined
}

const iso = (millis: number): string => new Date(millis).toISOString()

/** A row that maps, or why it does not. */
export type Mapped = Either.Either<MemoryRecord.MemoryRecord, string>

/**
 * Maps one v1 row. `successorOf` resolves a `superseded_by:<v1 id>` reason to the imported id of
 * the successor when it is part of the same import.
 */
export const mapRow = (row: LegacyRow, successorOf: (reference: string) => string | undefined): Mapped => {
  const content = row.content
  if (typeof content !== "string") return Either.left("content is missing or not text")
  if (content.trim() === "") return Either.left("content is empty")
  const createdAt = timestampOf(row.created_at)
  if (createdAt === undefined) {
    return Either.left(`created_at ${JSON.stringify(String(row.created_at))} is not a timestamp`)
  }
  const sourceType = sourceTypeOf(row.source_type)
  const domain = row.domain === null || row.domain === undefined ? undefined : String(row.domain)
  const invalidated = row.invalidated_at !== null && row.invalidated_at !== undefined
  // An unreadable invalidation time still marks the row invalid: it is dated at its creation.
  const invalidatedAt = invalidated ? (timestampOf(row.invalidated_at) ?? createdAt) : undefined
  const reason = typeof row.invalidation_reason === "string" && row.invalidation_reason !== ""
    ? row.invalidation_reason
    : undefined
  const successorRef = reason !== undefined ? /^superseded_by:(.+)$/.exec(reason.trim())?.[1] : undefined
  const successor = invalidated && successorRef !== undefined ? successorOf(successorRef.trim()) : undefined
  const expiresAt = timestampOf(row.expires_at)
  const epoch = oneLine(row.epoch)
  const encoded: typeof MemoryRecord.MemoryRecord.Encoded = {
    id: legacyId(row.rowid),
    content,
    kind: literalOf(MemoryRecord.MemoryKind.literals, row.memory_kind) ?? kindOf(domain, row.source_type),
    tags: [],
    sourceType,
    scope: scopeOf(row.namespace),
    deliveryPolicy: literalOf(MemoryRecord.DeliveryPolicy.literals, row.delivery_policy) ?? deliveryPolicyOf(domain),
    reviewState: reviewStateOf(literalOf(MemoryRecord.ReviewState.literals, row.review_state), sourceType, content),
    createdAt: iso(createdAt),
    ...(epoch !== undefined ? { epoch } : {}),
    ...(expiresAt !== undefined ? { expiresAt: iso(expiresAt) } : {}),
    ...(invalidatedAt !== undefined ? { invalidatedAt: iso(invalidatedAt) } : {}),
    ...(successor !== undefined
      ? { invalidationReason: MemoryRecord.supersededReason(successor), supersededBy: successor }
      : reason !== undefined
      ? { invalidationReason: reason }
      : {}),
    ...(domain !== undefined ? { domain } : {})
  }
  return Either.mapLeft(MemoryWrite.decodeStoredRecord(encoded), MemoryWrite.describeParseError)
}

/**
 * A legacy row's review state, screened as every write path screens (`InstructionScreen`,
 * decision 0067): content that reads as an instruction to the agent arrives `pending` whatever
 * the v1 store said (`rejected` stays rejected); otherwise the stated state, or the source's
 * initial one.
 */
const reviewStateOf = (
  stated: MemoryRecord.ReviewState | undefined,
  sourceType: MemoryRecord.SourceType,
  content: string
): MemoryRecord.ReviewState =>
  stated === undefined
    ? MemoryRecord.initialReviewStateOf({ sourceType, content })
    : stated !== "rejected" && InstructionScreen.isFlagged({ content })
    ? "pending"
    : stated

/**
 * Maps every row, then links supersession chains inside the import: a successor that exactly
 * one imported row names gets `supersedes` pointing back at it.
 */
export const mapRows = (
  rows: ReadonlyArray<LegacyRow>,
  hasIdColumn: boolean
): {
  readonly records: Array<MemoryRecord.MemoryRecord>
  readonly skipped: Array<{ rowid: number; reason: string }>
} => {
  const rowidByRef = new Map<string, number>()
  for (const row of rows) {
    if (hasIdColumn && row.id !== null && row.id !== undefined) rowidByRef.set(String(row.id), row.rowid)
    else rowidByRef.set(String(row.rowid), row.rowid)
  }
  const mapped = rows.map((row) => ({ row, result: mapRow(row, () => undefined) }))
  const importable = new Set(mapped.flatMap(({ result, row }) => (Either.isRight(result) ? [row.rowid] : [])))
  const successorOf = (reference: string) => {
    const rowid = rowidByRef.get(reference)
    return rowid !== undefined && importable.has(rowid) ? legacyId(rowid) : undefined
  }
  const records: Array<MemoryRecord.MemoryRecord> = []
  const skipped: Array<{ rowid: number; reason: string }> = []
  for (const { row } of mapped) {
    const result = mapRow(row, successorOf)
    if (Either.isLeft(result)) skipped.push({ rowid: row.rowid, reason: result.left })
    else records.push(result.right)
  }
  const predecessors = new Map<string, Array<string>>()
  for (const record of records) {
    if (record.supersededBy !== undefined) {
      predecessors.set(record.supersededBy, [...(predecessors.get(record.supersededBy) ?? []), record.id])
    }
  }
  return {
    records: records.map((record) => {
      const before = predecessors.get(record.id)
      return before?.length === 1
        ? new MemoryRecord.MemoryRecord({ ...record, supersedes: before[0]! }, { disableValidation: true })
        : record
    }),
    skipped
  }
}
