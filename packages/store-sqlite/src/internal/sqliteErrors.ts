/**
 * What an SQLite failure means, from the result code better-sqlite3 attaches to it.
 *
 * @internal
 */
import { StorageFull } from "@engram/core"
import * as Predicate from "effect/Predicate"

const codeOf = (error: unknown): string | undefined =>
  Predicate.hasProperty(error, "_tag") && error._tag === "SqlError" && Predicate.hasProperty(error, "cause") &&
    Predicate.hasProperty(error.cause, "code") && typeof error.cause.code === "string"
    ? error.cause.code
    : undefined

/** `SQLITE_BUSY*`: another connection holds the lock; trying again can succeed. */
export const isBusy = (error: unknown): boolean => codeOf(error)?.startsWith("SQLITE_BUSY") === true

/** `SQLITE_CORRUPT*` or `SQLITE_NOTADB`: the file is damaged. */
export const isDamaged = (error: unknown): boolean => {
  const code = codeOf(error)
  return code !== undefined && (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB")
}

/**
 * `SQLITE_READONLY_ROLLBACK` or `SQLITE_READONLY_RECOVERY`: a crash left a journal that must be
 * rolled back (or a log whose index must be rebuilt), and this connection may not write.
 */
export const needsWritableRecovery = (error: unknown): boolean => {
  const code = codeOf(error)
  return code === "SQLITE_READONLY_ROLLBACK" || code === "SQLITE_READONLY_RECOVERY"
}

/** `SQLITE_FULL`: the disk is full, or the database reached `max_page_count`. */
export const isFull = (error: unknown): boolean => codeOf(error) === "SQLITE_FULL"

/**
 * What a store failure carries as its cause for a failed statement: a `StorageFull` when SQLite
 * ran out of room (the failure then has that class: HTTP 507, exit 3), else the error itself.
 */
export const causeOf = (error: unknown, detail: string): unknown =>
  isFull(error) ? new StorageFull.StorageFull({ backend: "SQLite", detail }) : error
