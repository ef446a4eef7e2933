/**
 * The group-commit queue itself (decision 0206; its waiting list since decision 0228), with a
 * `run` the test holds and inspects: requests that wait together are run as one group and each is
 * answered with its own outputs, in order; a request that would overflow the group opens the next;
 * a failed group is run again request by request; requests still waiting when the server's scope
 * closes are interrupted, not left hanging.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Scope from "effect/Scope"
import * as GroupCommit from "../src/internal/groupCommit.js"

/** Lets the event loop turn `n` times (the worker closes a group after one `setImmediate`). */
const turns = (n: number) =>
  Effect.promise(async () => {
    for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
  })

/** A `run` whose first call waits for `release`; every call's items are recorded. */
const heldRun = Effect.gen(function*() {
  const release = yield* Deferred.make<void>()
  const groups: Array<ReadonlyArray<number>> = []
  const run = (items: ReadonlyArray<number>) =>
    Effect.suspend(() => {
      groups.push(items)
      const held = groups.length === 1 ? Deferred.await(release) : Effect.void
      return Effect.zipRight(
        held,
        items.includes(-1) ? Effect.fail(`refused ${items.join(",")}`) : Effect.succeed(items.map((item) => item * 10))
      )
    })
  return { release: Deferred.succeed(release, undefined), groups, run }
})

describe("group commit queue", () => {
  it.live("requests waiting together run as one group, each answered with its own outputs in order", () =>
    Effect.scoped(Effect.gen(function*() {
      const { groups, release, run } = yield* heldRun
      const submit = yield* GroupCommit.make(run, { maxItems: 100 })
      const first = yield* Effect.fork(submit([1]))
      yield* turns(5)
      const rest = yield* Effect.forEach([[2, 3], [4], [5, 6, 7]], (items) => Effect.fork(submit(items)))
      yield* turns(5)
      yield* release
      expect(yield* Fiber.join(first)).toEqual([10])
      expect(yield* Effect.forEach(rest, Fiber.join)).toEqual([[20, 30], [40], [50, 60, 70]])
      expect(groups).toEqual([[1], [2, 3, 4, 5, 6, 7]])
    })))

  it.live("a request that would overflow the group opens the next one", () =>
    Effect.scoped(Effect.gen(function*() {
      const { groups, release, run } = yield* heldRun
      const submit = yield* GroupCommit.make(run, { maxItems: 4 })
      const first = yield* Effect.fork(submit([1]))
      yield* turns(5)
      const rest = yield* Effect.forEach([[2, 3], [4, 5, 6], [7]], (items) => Effect.fork(submit(items)))
      yield* turns(5)
      yield* release
      yield* Fiber.join(first)
      expect(yield* Effect.forEach(rest, Fiber.join)).toEqual([[20, 30], [40, 50, 60], [70]])
      // [2, 3] + [4, 5, 6] would be 5 items: [4, 5, 6] opens the next group, which [7] joins.
      expect(groups).toEqual([[1], [2, 3], [4, 5, 6, 7]])
    })))

  it.live("a failed group is run again request by request: only the failing request fails", () =>
    Effect.scoped(Effect.gen(function*() {
      const { groups, release, run } = yield* heldRun
      const submit = yield* GroupCommit.make(run, { maxItems: 100 })
      const first = yield* Effect.fork(submit([1]))
      yield* turns(5)
      const rest = yield* Effect.forEach([[2], [-1, 3], [4]], (items) => Effect.fork(Effect.exit(submit(items))))
      yield* turns(5)
      yield* release
      yield* Fiber.join(first)
      const exits = yield* Effect.forEach(rest, Fiber.join)
      expect(exits[0]).toEqual(Exit.succeed([20]))
      expect(exits[1]).toEqual(Exit.fail("refused -1,3"))
      expect(exits[2]).toEqual(Exit.succeed([40]))
      expect(groups).toEqual([[1], [2, -1, 3, 4], [2], [-1, 3], [4]])
    })))

  it.live("requests still waiting when the scope closes are interrupted, not left hanging", () =>
    Effect.gen(function*() {
      const { run } = yield* heldRun
      const scope = yield* Scope.make()
      const submit = yield* Scope.extend(GroupCommit.make(run, { maxItems: 100 }), scope)
      // The first is held in its run; the second waits for the next group.
      yield* Effect.fork(submit([1]))
      yield* turns(5)
      const waiting = yield* Effect.fork(submit([2]))
      yield* turns(5)
      yield* Scope.close(scope, Exit.void)
      const exit = yield* Fiber.await(waiting).pipe(Effect.timeout("2 seconds"))
      expect(Exit.isInterrupted(exit)).toBe(true)
      // And a request submitted after the close is refused the same way.
      expect(Exit.isInterrupted(yield* Effect.exit(submit([3])))).toBe(true)
    }))
})
