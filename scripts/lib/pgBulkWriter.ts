/**
 * One writer process of `bulkLoad` (`scripts/lib/pgBulkLoad.ts`): the bench's inputs `from` …
 * `to − 1` (`inputsBetween`) written through the store's own `MemoryStore.write`, a batch at a
 * time, each batch stamped as one write of every record at `at` would stamp it (record i created at
 * `at + i`). It tells its parent how many it has written after each batch.
 */
import { MemoryStore } from "@engram/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import { inputsBetween } from "./conversation.js"
import type { WriterTask } from "./pgBulkLoad.js"
import { pgRuntime } from "./pgSchema.js"

/** A clock that stands at `millis` (it still sleeps in real time). */
const standingAt = (millis: number): Clock.Clock => {
  const real = Clock.make()
  const nanos = BigInt(millis) * 1_000_000n
  return {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis: () => millis,
    currentTimeMillis: Effect.succeed(millis),
    unsafeCurrentTimeNanos: () => nanos,
    currentTimeNanos: Effect.succeed(nanos),
    sleep: (duration) => real.sleep(duration)
  }
}

const task = JSON.parse(process.argv[2]!) as WriterTask
const runtime = pgRuntime(task.url, task.schema, 1)
await runtime.runPromise(Effect.gen(function*() {
  const store = yield* MemoryStore.MemoryStore
  let first = task.from
  let batch: Array<Parameters<typeof store.write>[0][number]> = []
  const flush = Effect.suspend(() => {
    const written = batch
    batch = []
    return Effect.map(Effect.withClock(store.write(written), standingAt(task.at + first)), () => {
      first += written.length
      process.send!(written.length)
    })
  })
  for (const input of inputsBetween(task.from, task.to, task.seed, task.layout)) {
    batch.push(input)
    if (batch.length === task.batch) yield* flush
  }
  if (batch.length > 0) yield* flush
}))
await runtime.dispose()
