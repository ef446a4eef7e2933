import { assert, expect } from "@effect/vitest"
import { IdGenerator, MemoryQuery, MemoryRecord, MemoryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import * as fc from "fast-check"
import type { ModelCheckOptions } from "../MemoryStoreConformance.js"
import { T0 } from "./harness.js"
import { type FaultTag, type GeneratedInput, Model, type ModelRecord, type Position, project } from "./model.js"

/**
 * Which record a command targets: the n-th stored record (modulo the store's size, so commands
 * mostly hit records that exist), or a literal id that may be unknown.
 */
export type Target = { readonly existing: number } | { readonly id: string }

/** A generated input; `fresh` replaces its id with one never used before in the run. */
export interface CommandInput extends GeneratedInput {
  readonly fresh: boolean
}

export type Command =
  | { readonly _tag: "Write"; readonly inputs: ReadonlyArray<CommandInput> }
  | { readonly _tag: "SetReviewState"; readonly target: Target; readonly state: MemoryRecord.ReviewState }
  | { readonly _tag: "Supersede"; readonly target: Target; readonly successor: CommandInput }
  | { readonly _tag: "Expire"; readonly target: Target }
  | {
    readonly _tag: "List"
    readonly filters: MemoryQuery.MemoryFilters
    readonly limit: number
    readonly pages: number
  }
  | { readonly _tag: "ContinueList" }
  | { readonly _tag: "Get"; readonly ids: ReadonlyArray<string>; readonly scopes?: ReadonlyArray<string> }
  | { readonly _tag: "Search"; readonly text: string; readonly filters: MemoryQuery.MemoryFilters }
  | {
    readonly _tag: "Neighbours"
    readonly around: ReadonlyArray<Target>
    readonly exclude: boolean
    readonly window: number
    readonly filters: MemoryQuery.MemoryFilters
  }
  | { readonly _tag: "AdvanceClock"; readonly millis: number }

// Ids that collide often and whose raw order differs from any locale order, and a larger pool
// that rarely collides, so that writes and supersessions also succeed often.
const idPool = ["a", "b", "B", "a-1", "a.1", "a_1", "a:1", "10", "9", "z"] as const
const freshIdPool = Array.from({ length: 12 }, (_, i) => `n${i}`)
const scopes = ["global", "project:a", "project:b", "session:s"] as const
const contentWords = [
  "Doug",
  "café",
  "CAFE",
  "e-mail",
  "name",
  "am",
  "Zürich",
  "Москве",
  "東京",
  "ΦΙΛΟΥΣ",
  "prefers",
  "v2.0",
  "O'Brien",
  "coffee"
] as const
const queryWords = [
  "doug",
  "CAFÉ",
  "cafe",
  "mail",
  "email",
  "am",
  "nam",
  "zurich",
  "москве",
  "東",
  "東京",
  "φίλους",
  "prefer",
  "prefers",
  "v2",
  "brien",
  "name",
  "coffee",
  "travel",
  "work",
  "?!"
] as const

const idArb = fc.oneof(fc.constantFrom(...idPool), fc.constantFrom(...freshIdPool))
const targetArb: fc.Arbitrary<Target> = fc.oneof(
  { weight: 3, arbitrary: fc.nat(50).map((existing) => ({ existing })) },
  { weight: 1, arbitrary: fc.oneof(idArb, fc.constant("ghost")).map((id) => ({ id })) }
)

const validInputArb = fc.record(
  {
    id: idArb,
    content: fc.array(fc.constantFrom(...contentWords), { minLength: 1, maxLength: 4 }).map((words) => words.join(" ")),
    kind: fc.constantFrom(...MemoryRecord.MemoryKind.literals),
    label: fc.constantFrom("name", "timezone", "Coffee order"),
    tags: fc.array(fc.constantFrom("travel-plans", "work", "Café"), { maxLength: 2 }),
    sourceType: fc.constantFrom(...MemoryRecord.SourceType.literals),
    scope: fc.constantFrom(...scopes),
    deliveryPolicy: fc.constantFrom(...MemoryRecord.DeliveryPolicy.literals),
    epoch: fc.constant("e1"),
    expiresInDays: fc.constantFrom(0.5, 1, 2)
  },
  { requiredKeys: ["id", "content", "kind"] }
)

const generatedInputArb: fc.Arbitrary<CommandInput> = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.tuple(validInputArb, fc.boolean()).map(([input, fresh]) => ({ input, valid: true, fresh }))
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(validInputArb, fc.constantFrom({ label: "two\nlines" }, { content: "   " }), fc.boolean())
      .map(([input, flaw, fresh]) => ({ input: { ...input, ...flaw }, valid: false, fresh }))
  }
)

const filtersArb: fc.Arbitrary<MemoryQuery.MemoryFilters> = fc.oneof(
  fc.constant({}),
  fc.constant({ deliverable: true }),
  fc.constant({ includeSuperseded: true }),
  fc.oneof(
    fc.subarray([...scopes]).map((scopes) => ({ scopes })),
    fc.subarray([...MemoryRecord.MemoryKind.literals]).map((kinds) => ({ kinds })),
    fc.subarray([...MemoryRecord.DeliveryPolicy.literals]).map((deliveryPolicies) => ({ deliveryPolicies })),
    fc.subarray([...MemoryRecord.ReviewState.literals]).map((reviewStates) => ({ reviewStates }))
  ),
  fc.record(
    {
      scopes: fc.subarray([...scopes]),
      kinds: fc.subarray([...MemoryRecord.MemoryKind.literals]),
      deliveryPolicies: fc.subarray([...MemoryRecord.DeliveryPolicy.literals]),
      reviewStates: fc.subarray([...MemoryRecord.ReviewState.literals]),
      deliverable: fc.boolean(),
      includeSuperseded: fc.boolean()
    },
    { requiredKeys: [] }
  )
)

const separatorArb = fc.constantFrom(" ", ", ", "-", " / ")

export const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.array(generatedInputArb, { minLength: 1, maxLength: 3 }).map((inputs) => ({
      _tag: "Write" as const,
      inputs
    }))
  },
  {
    weight: 2,
    arbitrary: fc
      .record({ target: targetArb, state: fc.constantFrom(...MemoryRecord.ReviewState.literals) })
      .map((c) => ({ _tag: "SetReviewState" as const, ...c }))
  },
  {
    weight: 2,
    arbitrary: fc.record({ target: targetArb, successor: generatedInputArb }).map((c) => ({
      _tag: "Supersede" as const,
      ...c
    }))
  },
  { weight: 1, arbitrary: targetArb.map((target) => ({ _tag: "Expire" as const, target })) },
  {
    weight: 3,
    arbitrary: fc
      .record({ filters: filtersArb, limit: fc.integer({ min: 1, max: 4 }), pages: fc.integer({ min: 1, max: 3 }) })
      .map((c) => ({ _tag: "List" as const, ...c }))
  },
  { weight: 1, arbitrary: fc.constant({ _tag: "ContinueList" as const }) },
  {
    weight: 1,
    arbitrary: fc
      .record(
        {
          ids: fc.shuffledSubarray([...idPool, ...freshIdPool, "ghost"], { minLength: 1, maxLength: 6 }),
          scopes: fc.subarray([...scopes])
        },
        { requiredKeys: ["ids"] }
      )
      .map((c) => ({ _tag: "Get" as const, ...c }))
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        words: fc.oneof(
          fc.constantFrom(...queryWords).map((word) => [word]),
          fc.array(fc.constantFrom(...queryWords), { minLength: 2, maxLength: 3 })
        ),
        separator: separatorArb,
        filters: filtersArb
      })
      .map(({ filters, separator, words }) => ({ _tag: "Search" as const, text: words.join(separator), filters }))
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        around: fc.array(targetArb, { minLength: 1, maxLength: 3 }),
        exclude: fc.boolean(),
        window: fc.integer({ min: 0, max: 3 }),
        filters: filtersArb
      })
      .map((c) => ({ _tag: "Neighbours" as const, ...c }))
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(0, 1, 1_000, 3_600_000, 43_200_000, 86_400_000)
      .map((millis) => ({ _tag: "AdvanceClock" as const, millis }))
  }
)

interface OpenCursor {
  readonly cursor: string
  readonly position: Position
  readonly filters: MemoryQuery.MemoryFilters
  readonly limit: number
}

const positionOf = (record: ModelRecord): Position => ({ createdAt: record.createdAt, id: record.id })

const expectFailureAmong = <A, E extends { readonly _tag: string }>(
  outcome: Either.Either<A, E>,
  faults: ReadonlyArray<FaultTag>,
  context: string
): E => {
  expect(Either.isLeft(outcome), `${context}: expected one of [${faults.join(", ")}]`).toBe(true)
  const error = (outcome as Either.Left<E, A>).left
  expect(faults, `${context}: failed with ${error._tag}`).toContain(error._tag)
  return error
}

const expectSuccess = <A, E extends { readonly _tag: string }>(outcome: Either.Either<A, E>, context: string): A => {
  if (Either.isLeft(outcome)) return assert.fail(`${context}: expected success, failed with ${outcome.left._tag}`)
  return outcome.right
}

/** Runs one generated command sequence against a fresh store and the model, comparing after every step. */
export const runCommands = (commands: ReadonlyArray<Command>) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const keyword = store.capabilities.search === "keyword"
    yield* TestClock.setTime(T0)
    const model = new Model(T0)
    let open: OpenCursor | undefined

    // One page of `filters` after `after`, checked against the model; returns the next cursor.
    const checkPage = (
      context: string,
      filters: MemoryQuery.MemoryFilters,
      limit: number,
      cursor: string | undefined,
      after: Position | undefined
    ) =>
      Effect.gen(function*() {
        const page = yield* store.list({ ...filters, limit, ...(cursor !== undefined ? { cursor } : {}) })
        const remaining = model.list(filters, after)
        expect(page.records.map(project), `${context}: page`).toEqual(remaining.slice(0, limit))
        expect(page.skipped, `${context}: skipped`).toBe(0)
        if (remaining.length > limit) expect(page.nextCursor, `${context}: more records follow`).toBeDefined()
        if (page.records.length < limit) expect(page.nextCursor, `${context}: short page is the last`).toBeUndefined()
        const last = remaining.slice(0, limit).at(-1)
        return page.nextCursor !== undefined && last !== undefined
          ? { cursor: page.nextCursor, position: positionOf(last), filters, limit }
          : undefined
      })

    const resolve = (target: Target): string => {
      if ("id" in target) return target.id
      const all = model.all()
      return all.length === 0 ? "ghost" : all[target.existing % all.length]!.id
    }
    const freshen = (input: CommandInput, id: string): GeneratedInput =>
      input.fresh ? { input: { ...input.input, id }, valid: input.valid } : input

    for (const [step, command] of commands.entries()) {
      const context = `step ${step} ${JSON.stringify(command)}`
      switch (command._tag) {
        case "Write": {
          const inputs = command.inputs.map((input, i) => freshen(input, `w${step}-${i}`))
          const outcome = yield* Effect.either(store.write(inputs.map((generated) => generated.input)))
          const { faults, invalidIndexes } = model.writeFaults(inputs)
          if (faults.length > 0) {
            const error = expectFailureAmong(outcome, faults, context)
            if (error._tag === "InvalidMemoryInput") expect(invalidIndexes, context).toContain(error.index)
          } else {
            const written = expectSuccess(outcome, context)
            expect(written.map(project), context).toEqual(model.write(inputs))
          }
          break
        }
        case "SetReviewState": {
          const id = resolve(command.target)
          const outcome = yield* Effect.either(store.setReviewState(id, command.state))
          const faults = model.reviewFaults(id)
          if (faults.length > 0) expectFailureAmong(outcome, faults, `${context} on ${id}`)
          else {
            const updated = expectSuccess(outcome, context)
            expect(project(updated), `${context} on ${id}`).toEqual(model.setReviewState(id, command.state))
          }
          break
        }
        case "Supersede": {
          const oldId = resolve(command.target)
          const successor = freshen(command.successor, `s${step}`)
          const where = `${context} of ${oldId} by ${successor.input.id}`
          const outcome = yield* Effect.either(store.supersede(oldId, successor.input))
          const faults = model.supersedeFaults(oldId, successor)
          if (faults.length > 0) expectFailureAmong(outcome, faults, where)
          else {
            const result = expectSuccess(outcome, where)
            const expected = model.supersede(oldId, successor.input)
            expect(project(result.successor), where).toEqual(expected.successor)
            expect(project(result.superseded), where).toEqual(expected.superseded)
          }
          break
        }
        case "Expire": {
          const id = resolve(command.target)
          const outcome = yield* Effect.either(store.expire(id))
          const faults = model.reviewFaults(id)
          if (faults.length > 0) expectFailureAmong(outcome, faults, `${context} on ${id}`)
          else expect(project(expectSuccess(outcome, context)), `${context} on ${id}`).toEqual(model.expire(id))
          break
        }
        case "List": {
          open = yield* checkPage(`${context} page 1`, command.filters, command.limit, undefined, undefined)
          for (let page = 2; page <= command.pages && open !== undefined; page++) {
            open = yield* checkPage(`${context} page ${page}`, open.filters, open.limit, open.cursor, open.position)
          }
          break
        }
        case "ContinueList": {
          if (open !== undefined) open = yield* checkPage(context, open.filters, open.limit, open.cursor, open.position)
          break
        }
        case "Get": {
          const options = command.scopes !== undefined ? { scopes: command.scopes } : undefined
          const result = yield* store.get(command.ids, options)
          expect(result.records.map(project), context).toEqual(model.get(command.ids, command.scopes))
          break
        }
        case "Search": {
          if (!keyword) break
          const result = yield* store.search(command.text, { ...command.filters, limit: MemoryQuery.MAX_LIMIT })
          const ids = result.hits.map((hit) => hit.record.id).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
          expect(ids, context).toEqual(model.search(command.text, command.filters))
          break
        }
        case "Neighbours": {
          // Written without positions, episodes are placed by write order (decision 0233).
          const around = [...new Set(command.around.map(resolve))]
          const exclude = command.exclude ? around : []
          const result = yield* store.neighbours({
            ...command.filters,
            positions: [],
            around,
            exclude,
            window: command.window
          })
          const expected = model.neighbours(around, exclude, command.window, command.filters)
          expect(result.records.map((record) => record.id), context).toEqual(expected.ids)
          expect(
            result.places.map(({ id, scope, thread, turn }) => ({ id, scope, thread, turn })),
            context
          ).toEqual(expected.places.map((place) => ({ ...place, thread: MemoryQuery.WRITE_ORDER_THREAD })))
          break
        }
        case "AdvanceClock": {
          yield* TestClock.adjust(command.millis)
          model.now += command.millis
          break
        }
      }
      const everything = yield* store.list({ includeSuperseded: true, limit: MemoryQuery.MAX_LIMIT })
      expect(everything.records.map(project), `${context}: whole store afterwards`).toEqual(model.all())
    }
  })

/** Checks generated command sequences against fresh builds of `layer`; rejects with a shrunk counterexample. */
export const checkAgainstModel = <RExtra, LE>(
  layer: Layer.Layer<MemoryStore.MemoryStore | RExtra, LE>,
  options: ModelCheckOptions = {}
): Promise<void> =>
  fc.assert(
    fc.asyncProperty(
      fc.array(commandArb, { minLength: 1, maxLength: options.maxCommands ?? 30, size: "max" }),
      (commands) =>
        Effect.runPromise(
          runCommands(commands).pipe(
            Effect.provide(Layer.merge(layer, IdGenerator.sequential("gen"))),
            Effect.provide(TestContext.TestContext)
          ) as Effect.Effect<void, unknown>
        )
    ),
    { numRuns: options.numRuns ?? 100, ...(options.seed !== undefined ? { seed: options.seed } : {}) }
  )
