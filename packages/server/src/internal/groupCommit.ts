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
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as FiberId from "effect/FiberId"
import type * as Scope from "effect/Scope"

interface Pending<I, O, E> {
  readonly items: ReadonlyArray<I>
  /** Answers the waiting request: called once, with its outcome. */
  readonly done: (exit: Exit.Exit<ReadonlyArray<O>, E>) => void
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
 *
 * The waiting requests are a plain array and each waits in one `Effect.async`, resumed with its
 * own outcome: a write request pays for no queue or deferred of its own (decision 0228). When the
 * scope closes, requests still waiting are interrupted.
 */
export const make = <I, O, E>(
  run: (items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>,
  options: { readonly maxItems: number }
): Effect.Effect<(items: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, E>, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Requests waiting for a group, oldest first; the first may be one that did not fit in the
    // group just closed, which opens the next one.
    let waiting: Array<Pending<I, O, E>> = []
    // The idle worker's wake-up, while it waits for a first request.
    let wake: (() => void) | undefined
    let closed = false

    const alone = (pending: Pending<I, O, E>) =>
      Effect.map(Effect.exit(run(pending.items)), (exit) => pending.done(exit))

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
          return Effect.sync(() => {
            let offset = 0
            for (const pending of group) {
              pending.done(Exit.succeed(exit.value.slice(offset, offset + pending.items.length)))
              offset += pending.items.length
            }
          })
        }
      )

    const firstRequest = Effect.async<void>((resume) => {
      if (waiting.length > 0) return resume(Effect.void)
      wake = () => resume(Effect.void)
      return Effect.sync(() => {
        wake = undefined
      })
    })

    /** Every request waiting, up to `maxItems` items (always the first, whatever its size). */
    const takeGroup = (): ReadonlyArray<Pending<I, O, E>> => {
      let size = waiting[0]!.items.length
      let count = 1
      while (count < waiting.length && size + waiting[count]!.items.length <= options.maxItems) {
        size += waiting[count]!.items.length
        count++
      }
      const group = waiting.slice(0, count)
      waiting = waiting.slice(count)
      return group
    }

    const nextGroup = Effect.zipRight(firstRequest, Effect.zipRight(afterPendingIo, Effect.sync(takeGroup)))

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
        const left = waiting
        waiting = []
        for (const pending of left) pending.done(Exit.interrupt(FiberId.none))
      })
    )
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(nextGroup, writeGroup)))

    return (items) =>
      Effect.async<ReadonlyArray<O>, E>((resume) => {
        if (closed) return resume(Effect.interrupt)
        waiting.push({ items, done: resume })
        const idle = wake
        wake = undefined
        idle?.()
      })
  })
