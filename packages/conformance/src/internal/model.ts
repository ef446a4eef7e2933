/**
 * A plain, array-based model of a memory store, written from the contract rather than from any
 * store's code: creation stamping, filters, listing order, cursors, lifecycle and token matching.
 * Only the tokenizer is shared, because the shared tokenizer *is* the search contract.
 */
import { SearchTokenizer } from "@engram/core"
import type { MemoryQuery, MemoryRecord } from "@engram/core"
import * as DateTime from "effect/DateTime"

/** A record as the model keeps it: plain data, times in epoch milliseconds. */
export interface ModelRecord {
  readonly id: string
  readonly content: string
  readonly kind: string
  readonly label?: string
  readonly tags: ReadonlyArray<string>
  readonly sourceType: string
  readonly trustTier: number
  readonly scope: string
  readonly deliveryPolicy: string
  readonly reviewState: string
  readonly createdAt: number
  readonly epoch?: string
  readonly expiresAt?: number
  readonly invalidatedAt?: number
  readonly invalidationReason?: string
  readonly supersededBy?: string
  readonly supersedes?: string
  readonly domain?: string
}

/** A generated write input, and whether it was generated valid. Generated inputs always carry an id. */
export interface GeneratedInput {
  readonly input: MemoryRecord.MemoryWriteInput & { readonly id: string }
  readonly valid: boolean
}

/** Where a listing page ended. */
export interface Position {
  readonly createdAt: number
  readonly id: string
}

export type FaultTag = "DuplicateMemoryId" | "InvalidMemoryInput" | "MemoryNotFound" | "MemoryConflict"

const millis = (value: DateTime.Utc | undefined): number | undefined =>
  value === undefined ? undefined : DateTime.toEpochMillis(value)

const defined = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/** A stored record in the model's terms. */
export const project = (record: MemoryRecord.MemoryRecord): ModelRecord => ({
  id: record.id,
  content: record.content,
  kind: record.kind,
  ...defined("label", record.label),
  tags: [...record.tags],
  sourceType: record.sourceType,
  trustTier: record.trustTier,
  scope: record.scope,
  deliveryPolicy: record.deliveryPolicy,
  reviewState: record.reviewState,
  createdAt: DateTime.toEpochMillis(record.createdAt),
  ...defined("epoch", record.epoch),
  ...defined("expiresAt", millis(record.expiresAt)),
  ...defined("invalidatedAt", millis(record.invalidatedAt)),
  ...defined("invalidationReason", record.invalidationReason),
  ...defined("supersededBy", record.supersededBy),
  ...defined("supersedes", record.supersedes),
  ...defined("domain", record.domain)
})

const DAY = 86_400_000

const tierOf = (sourceType: string): number =>
  sourceType === "operator" ? 3 : sourceType === "ingest" || sourceType === "unknown" ? 1 : 2

/** Newest first; equal instants by id, comparing UTF-16 code units. */
const newestFirst = (a: ModelRecord, b: ModelRecord): number =>
  a.createdAt !== b.createdAt ? b.createdAt - a.createdAt : a.id < b.id ? -1 : a.id > b.id ? 1 : 0

const allows = <A>(allowed: ReadonlyArray<A> | undefined, value: A): boolean =>
  allowed === undefined || allowed.some((candidate) => candidate === value)

export class Model {
  private records: Array<ModelRecord> = []
  /**
   * Each episode's place in its scope's write order (the inputs carry no position): the records
   * of each successful write, item by item, take the scope's next place (decision 0233).
   */
  private places = new Map<string, number>()
  private nextPlace = new Map<string, number>()

  private place(record: ModelRecord): void {
    if (record.kind !== "episode") return
    const turn = this.nextPlace.get(record.scope) ?? 0
    this.nextPlace.set(record.scope, turn + 1)
    this.places.set(record.id, turn)
  }

  constructor(public now: number) {}

  find(id: string): ModelRecord | undefined {
    return this.records.find((record) => record.id === id)
  }

  /** Every record in listing order, superseded ones included. */
  all(): ReadonlyArray<ModelRecord> {
    return [...this.records].sort(newestFirst)
  }

  private create(
    input: MemoryRecord.MemoryWriteInput & { readonly id: string },
    inherited: { readonly scope?: string; readonly supersedes?: string } = {},
    index = 0
  ): ModelRecord {
    const sourceType = input.sourceType ?? "unknown"
    // A batch's records are stamped one millisecond apart, in input order (decision 0173).
    const createdAt = this.now + index
    return {
      id: input.id,
      content: input.content,
      kind: input.kind,
      ...defined("label", input.label),
      tags: [...(input.tags ?? [])],
      sourceType,
      trustTier: tierOf(sourceType),
      scope: input.scope ?? inherited.scope ?? "global",
      deliveryPolicy: input.deliveryPolicy ?? "retrieved",
      reviewState: sourceType === "operator" ? "confirmed" : "pending",
      createdAt,
      ...defined("epoch", input.epoch),
      ...defined(
        "expiresAt",
        input.expiresInDays === undefined ? undefined : createdAt + Math.round(input.expiresInDays * DAY)
      ),
      ...defined("supersedes", inherited.supersedes)
    }
  }

  private replace(record: ModelRecord): ModelRecord {
    this.records = this.records.map((existing) => (existing.id === record.id ? record : existing))
    return record
  }

  /** The failures a batch may report (any of them), and the indexes of its invalid inputs. */
  writeFaults(inputs: ReadonlyArray<GeneratedInput>): {
    readonly faults: ReadonlyArray<FaultTag>
    readonly invalidIndexes: ReadonlyArray<number>
  } {
    const invalidIndexes = inputs.flatMap((generated, index) => (generated.valid ? [] : [index]))
    const ids = inputs.map((generated) => generated.input.id)
    const duplicate = ids.some((id, index) => ids.indexOf(id) !== index || this.find(id) !== undefined)
    const faults: Array<FaultTag> = []
    if (invalidIndexes.length > 0) faults.push("InvalidMemoryInput")
    if (duplicate) faults.push("DuplicateMemoryId")
    return { faults, invalidIndexes }
  }

  write(inputs: ReadonlyArray<GeneratedInput>): ReadonlyArray<ModelRecord> {
    const created = inputs.map(({ input }, index) => this.create(input, {}, index))
    this.records.push(...created)
    created.forEach((record) => this.place(record))
    return created
  }

  reviewFaults(id: string): ReadonlyArray<FaultTag> {
    return this.find(id) === undefined ? ["MemoryNotFound"] : []
  }

  setReviewState(id: string, reviewState: string): ModelRecord {
    return this.replace({ ...this.find(id)!, reviewState })
  }

  supersedeFaults(oldId: string, successor: GeneratedInput): ReadonlyArray<FaultTag> {
    const original = this.find(oldId)
    const faults: Array<FaultTag> = []
    if (original === undefined) faults.push("MemoryNotFound")
    if (original?.invalidatedAt !== undefined) faults.push("MemoryConflict")
    if (!successor.valid) faults.push("InvalidMemoryInput")
    if (this.find(successor.input.id) !== undefined) faults.push("DuplicateMemoryId")
    return faults
  }

  supersede(oldId: string, input: GeneratedInput["input"]): {
    readonly superseded: ModelRecord
    readonly successor: ModelRecord
  } {
    const original = this.find(oldId)!
    const successor = this.create(input, { scope: original.scope, supersedes: oldId })
    this.records.push(successor)
    this.place(successor)
    const superseded = this.replace({
      ...original,
      invalidatedAt: this.now,
      invalidationReason: `superseded_by:${successor.id}`,
      supersededBy: successor.id
    })
    return { superseded, successor }
  }

  expire(id: string): ModelRecord {
    const record = this.find(id)!
    return record.expiresAt !== undefined && record.expiresAt <= this.now
      ? record
      : this.replace({ ...record, expiresAt: this.now })
  }

  admits(record: ModelRecord, filters: MemoryQuery.MemoryFilters): boolean {
    if (!allows(filters.scopes, record.scope)) return false
    if (!allows(filters.kinds, record.kind)) return false
    if (!allows(filters.deliveryPolicies, record.deliveryPolicy)) return false
    if (!allows(filters.reviewStates, record.reviewState)) return false
    const invalidated = record.invalidatedAt !== undefined
    if (filters.deliverable === true) {
      const expired = record.expiresAt !== undefined && record.expiresAt <= this.now
      return record.reviewState !== "rejected" && !expired && !invalidated
    }
    return filters.includeSuperseded === true || !invalidated
  }

  /** The whole listing for `filters`, optionally starting strictly after `after`. */
  list(filters: MemoryQuery.MemoryFilters, after?: Position): ReadonlyArray<ModelRecord> {
    return this.all().filter((record) =>
      this.admits(record, filters) &&
      (after === undefined ||
        record.createdAt < after.createdAt ||
        (record.createdAt === after.createdAt && record.id > after.id))
    )
  }

  get(ids: ReadonlyArray<string>, scopes: ReadonlyArray<string> | undefined): ReadonlyArray<ModelRecord> {
    return ids.flatMap((id) => {
      const record = this.find(id)
      return record !== undefined && allows(scopes, record.scope) ? [record] : []
    })
  }

  /**
   * The neighbours of the records `around` in their scopes' write orders: every record `filters`
   * admits, not one of `exclude`, within `window` places of one of them, in conversation order
   * (scope, place, id), with its place; and the places of the records around that have one.
   */
  neighbours(
    around: ReadonlyArray<string>,
    exclude: ReadonlyArray<string>,
    window: number,
    filters: MemoryQuery.MemoryFilters
  ): {
    readonly ids: ReadonlyArray<string>
    readonly places: ReadonlyArray<{ readonly id: string; readonly scope: string; readonly turn: number }>
  } {
    const centres = around.flatMap((id) => {
      const turn = this.places.get(id)
      return turn === undefined ? [] : [{ id, scope: this.find(id)!.scope, turn }]
    })
    const read = this.records
      .flatMap((record) => {
        const turn = this.places.get(record.id)
        if (turn === undefined || exclude.includes(record.id) || !this.admits(record, filters)) return []
        const near = centres.some((c) => c.scope === record.scope && Math.abs(c.turn - turn) <= window)
        return near ? [{ id: record.id, scope: record.scope, turn }] : []
      })
      .sort((a, b) =>
        a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : a.turn - b.turn || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
      )
    return { ids: read.map((place) => place.id), places: [...centres, ...read] }
  }

  /** The ids of every record sharing at least one token with `text`, sorted. */
  search(text: string, filters: MemoryQuery.MemoryFilters): ReadonlyArray<string> {
    const wanted = new Set(SearchTokenizer.tokenize(text))
    return this.records
      .filter((record) =>
        this.admits(record, filters) &&
        [record.label ?? "", record.content, ...record.tags].some((field) =>
          SearchTokenizer.tokenize(field).some((token) => wanted.has(token))
        )
      )
      .map((record) => record.id)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  }
}
