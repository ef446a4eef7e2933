/**
 * Group commit: write requests that arrive together share one transaction (decision 0206).
 *
 * Each request submits its items (the records it writes) and waits. One worker takes every request
 * waiting when it looks — those that arrived while the previous group was being written — and runs
 * them all through `run` at once, in one transaction. A request is answered only after `run`
 * returns, that is after the commit. If the shared run fails, every request of the group is run
 * again on its own, in its own transaction, and answered with its own outcome: one bad request
 * neither loses nor answers for the others, and each answer is the one it would have got alone.
 */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"

interface Pending<I, O, E> {
  readonly items: ReadonlyArray<I>
  readonly done: Deferred.Deferred<ReadonlyArray<O>, E>
}

/**
 * Waits until the event loop has run the I/O callbacks it has ready (`setImmediate` runs right
 * after them): requests already received are parsed and submitted before a group is closed, so a
 * group holds every request that arrived while the previous one was being written.
 */
const afterPendingIo = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * Starts the worker (for the life of the scope) and returns `submit`: runs `items` in a group with
 * whatever else is waiting, `run` taking every request's items in order and returning one output
 * per item, in the same order. A group holds at most `maxItems` items (a request larger than that
 * runs alone).
 */
export const make = <I, O, E>(
  run: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>,
  options: { readonly maxItems: number }
): Effect.Effect<(items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    const queue = yield* Effect.acquireRelease(Queue.unbounded<Pending<I, O, E>>(), Queue.shutdown)
    // A request that did not fit in the group just closed opens the next one.
    let carried: Pending<I, O, E> | undefined

    const alone = (pending: Pending<I, O, E>) =>
      Effect.flatMap(Effect.exit(run(pending.items)), (exit) => Deferred.done(pending.done, exit))

    const writeGroup = (group: ReadonlyArray<Pending<I, O, E>>) =>
      group.length === 1 ? alone(group[0]!) : Effect.flatMap(
        Effect.exit(run(group.flatMap((pending) => pending.items))),
        (exit) => {
          if (Exit.isFailure(exit)) {
            return Effect.zipRight(
              Effect.logDebug("a group commit failed; writing its requests one by one").pipe(
                Effect.annotateLogs({ requests: group.length })
              ),
              Effect.forEach(group, alone, { discard: true })
            )
          }
          let offset = 0
          return Effect.forEach(group, (pending) => {
            const outputs = exit.value.slice(offset, offset + pending.items.length)
            offset += pending.items.length
            return Deferred.succeed(pending.done, outputs)
          }, { discard: true })
        }
      )

    const nextGroup = Effect.gen(function*() {
      const first = carried ?? (yield* Queue.take(queue))
      carried = undefined
      yield* afterPendingIo
      const group = [first]
      let size = first.items.length
      while (size < options.maxItems) {
        const next = yield* Queue.poll(queue)
        if (Option.isNone(next)) break
        if (size + next.value.items.length > options.maxItems) {
          carried = next.value
          break
        }
        group.push(next.value)
        size += next.value.items.length
      }
      return group
    })

    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(nextGroup, writeGroup)))

    return (items) =>
      Effect.flatMap(
        Deferred.make<ReadonlyArray<O>, E>(),
        (done) => Effect.zipRight(Queue.offer(queue, { items, done }), Deferred.await(done))
      )
  })
