/**
 * Fixtures the core tests share.
 */
import { MemoryRecord } from "@engram/core"
import * as DateTime from "effect/DateTime"

/** A pending global profile record ("My name is Doug", id `m1`), with `fields` laid over it. */
export const aRecord = (fields: Partial<MemoryRecord.MemoryRecord> = {}): MemoryRecord.MemoryRecord =>
  new MemoryRecord.MemoryRecord({
    id: "m1",
    content: "My name is Doug",
    kind: "profile",
    tags: [],
    sourceType: "conversation",
    scope: "global",
    deliveryPolicy: "retrieved",
    reviewState: "pending",
    createdAt: DateTime.unsafeMake(1_000),
    ...fields
  })
