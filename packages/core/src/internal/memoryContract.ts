import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { MemoryLimits } from "../MemoryLimits.js"
import { MemoryId, ReviewState, Scope } from "../MemoryRecord.js"
import type { Service as MemoryStoreService } from "../MemoryStore.js"
import {
  describeLimit,
  InvalidMemoryInput,
  InvalidMemoryQuery,
  InvalidReviewState,
  MemoryNotFound
} from "../MemoryStoreError.js"
import { checkCorroboratingSession } from "../MemoryWrite.js"
import { onFirstCall } from "./onFirstCall.js"
import { pagesOf, withPages } from "./searchPages.js"

const isId = onFirstCall(() => Schema.is(MemoryId))
const isScope = onFirstCall(() => Schema.is(Scope))
const isReviewState = onFirstCall(() => Schema.is(ReviewState))

const field = (input: unknown, name: string): unknown =>
  typeof input === "object" && input !== null && name in input ? (input as Record<string, unknown>)[name] : undefined

// The sizes a backend must never see: content over `maxContentChars`, more tags than `maxTags`.
// Checked on the raw input, before any schema walks it (a 600,000-tag array is refused by its
// length, not decoded tag by tag).
const checkSizes = (inputs: ReadonlyArray<unknown>): Effect.Effect<void, InvalidMemoryInput> =>
  Effect.flatMap(MemoryLimits, (limits) => {
    for (let index = 0; index < inputs.length; index++) {
      const content = field(inputs[index], "content")
      if (typeof content === "string" && content.length > limits.maxContentChars) {
        const limit = { name: "maxContentChars", max: limits.maxContentChars, size: content.length } as const
        return Effect.fail(new InvalidMemoryInput({ index, problem: describeLimit("content", limit), limit }))
      }
      const tags = field(inputs[index], "tags")
      if (Array.isArray(tags) && tags.length > limits.maxTags) {
        const limit = { name: "maxTags", max: limits.maxTags, size: tags.length } as const
        return Effect.fail(new InvalidMemoryInput({ index, problem: describeLimit("tags", limit), limit }))
      }
    }
    return Effect.void
  })

// An id that is not a valid id can never have been stored: a lifecycle call on it finds nothing.
const knownId = (id: unknown): Effect.Effect<MemoryId, MemoryNotFound> =>
  isId(id) ? Effect.succeed(id) : Effect.fail(new MemoryNotFound({ id: String(id) }))

/**
 * The store with the input contract in front of it. Everything a backend could treat differently
 * is settled here, once: over-limit content, tag counts and queries fail with `InvalidMemoryInput` /
 * `InvalidMemoryQuery` carrying the limit, a review
 * state that is not one fails with `InvalidReviewState`, an id that no record can have is not
 * found (left out of a `get`, `MemoryNotFound` on a lifecycle call), a scope no record can have
 * admits nothing. Schema decoding of write inputs and filters stays in `MemoryWrite`, where every
 * backend already runs it.
 */
export const withContract = (store: MemoryStoreService): MemoryStoreService => {
  const checked = contracted(store)
  const paged = pagesOf(store)
  if (paged === undefined) return checked
  // The same check of the text as `search`, at each take (a take after a failed one fails the same).
  return withPages(checked, (text, options) => {
    const pages = paged(typeof text === "string" ? text : "", options)
    return {
      searches: pages.searches,
      take: (limit, ahead) => Effect.zipRight(checkQuery(text), pages.take(limit, ahead))
    }
  })
}

const checkQuery = (text: unknown): Effect.Effect<void, InvalidMemoryQuery> =>
  Effect.flatMap(MemoryLimits, (limits) => {
    if (typeof text === "string" && text.length > limits.maxQueryChars) {
      const limit = { name: "maxQueryChars", max: limits.maxQueryChars, size: text.length } as const
      return Effect.fail(new InvalidMemoryQuery({ problem: describeLimit("the search text", limit), limit }))
    }
    return Effect.void
  })

const contracted = (store: MemoryStoreService): MemoryStoreService => ({
  ...store,
  write: (inputs) => Effect.zipRight(checkSizes(inputs), store.write(inputs)),
  restore: (records) => Effect.zipRight(checkSizes(records), store.restore(records)),
  get: (ids, options) =>
    store.get(
      ids.filter(isId),
      options?.scopes === undefined ? options : { ...options, scopes: options.scopes.filter(isScope) }
    ),
  search: (text, options) =>
    Effect.zipRight(
      checkQuery(text),
      Effect.suspend(() => store.search(typeof text === "string" ? text : "", options))
    ),
  neighbours: (query) =>
    Effect.flatMap(MemoryLimits, (limits) => {
      const window = field(query, "window")
      if (typeof window === "number" && window > limits.maxNeighbourWindow) {
        const limit = { name: "maxNeighbourWindow", max: limits.maxNeighbourWindow, size: window } as const
        return Effect.fail(new InvalidMemoryQuery({ problem: describeLimit("the neighbour window", limit), limit }))
      }
      const positions = field(query, "positions")
      const around = field(query, "around")
      // A record named `around` stands for its place: it counts as one position.
      const placed = (Array.isArray(positions) ? positions.length : 0) + (Array.isArray(around) ? around.length : 0)
      if (placed > limits.maxNeighbourPositions) {
        const limit = {
          name: "maxNeighbourPositions",
          max: limits.maxNeighbourPositions,
          size: placed
        } as const
        return Effect.fail(new InvalidMemoryQuery({ problem: describeLimit("the neighbour positions", limit), limit }))
      }
      const exclude = field(query, "exclude")
      if (Array.isArray(exclude) && exclude.length > limits.maxNeighbourExcluded) {
        const limit = { name: "maxNeighbourExcluded", max: limits.maxNeighbourExcluded, size: exclude.length } as const
        return Effect.fail(new InvalidMemoryQuery({ problem: describeLimit("the ids left out", limit), limit }))
      }
      return store.neighbours(query)
    }),
  setReviewState: (id, state) =>
    isReviewState(state)
      ? Effect.flatMap(knownId(id), (valid) => store.setReviewState(valid, state))
      : Effect.fail(new InvalidReviewState({ state })),
  supersede: (oldId, input) =>
    Effect.zipRight(checkSizes([input]), Effect.flatMap(knownId(oldId), (valid) => store.supersede(valid, input))),
  expire: (id) => Effect.flatMap(knownId(id), store.expire),
  corroborate: (id, options) =>
    Effect.flatMap(
      checkCorroboratingSession(options?.session),
      (session) => Effect.flatMap(knownId(id), (valid) => store.corroborate(valid, { session }))
    )
})
