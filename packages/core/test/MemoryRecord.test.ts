import { describe, expect, it } from "@effect/vitest"
import { MemoryRecord, MemoryWrite } from "@engram/core"
import { Arbitrary, DateTime, Either, FastCheck as fc, Schema } from "effect"

const decodeInput = Schema.decodeUnknownEither(MemoryRecord.MemoryWriteInput)

/** The one-line problem a decode failure reports, or undefined when the input decodes. */
const problemOf = (input: unknown): string | undefined =>
  Either.match(decodeInput(input), {
    onLeft: (error) => MemoryWrite.describeParseError(error),
    onRight: () => undefined
  })

// Printable characters from several scripts; none is a control character or line break.
const printable = fc.constantFrom("a", "Z", "7", " ", "-", "é", "ß", "東", "Ω", "ж", "'", "\u{1F600}", "_")
const controls = [
  "\n",
  "\r",
  "\t",
  "\u0000",
  "\u0007",
  "\u001b",
  "\u007f",
  "\u0085",
  "\u009f",
  "\u2028",
  "\u2029"
]

describe("MemoryWriteInput label", () => {
  it.prop(
    "a label with a control character or line break is rejected, naming label",
    [fc.array(printable, { maxLength: 20 }), fc.constantFrom(...controls), fc.nat()],
    ([chars, control, at]) => {
      const cut = at % (chars.length + 1)
      const label = [...chars.slice(0, cut), control, ...chars.slice(cut)].join("")
      const problem = problemOf({ content: "x", kind: "note", label })
      expect(problem).toMatch(/^label: /)
    }
  )

  it.prop(
    "a label over 64 characters is rejected, naming label",
    [fc.string({ minLength: 65, maxLength: 300 }).filter((s) => s.trim().length > 0)],
    ([label]) => {
      expect(problemOf({ content: "x", kind: "note", label })).toMatch(/^label: .*64/)
    }
  )

  it.prop(
    "a one-line label of at most 64 characters is kept as written",
    [
      fc
        .array(printable, { minLength: 1, maxLength: 32 })
        .map((chars) => chars.join(""))
        .filter((s) => s.trim() !== "")
    ],
    ([label]) => {
      const decoded = decodeInput({ content: "x", kind: "note", label })
      expect(Either.isRight(decoded) && decoded.right.label).toBe(label)
    }
  )

  it("a blank label is rejected, naming label", () => {
    expect(problemOf({ content: "x", kind: "note", label: "   " })).toMatch(/^label: /)
  })
})

describe("creation stamps", () => {
  it.prop(
    "trust tier follows the source type, and only operator writes start confirmed",
    [fc.constantFrom(...MemoryRecord.SourceType.literals)],
    ([sourceType]) => {
      const record = MemoryRecord.fromWriteInput({ content: "x", kind: "note", sourceType }, {
        id: "r",
        now: DateTime.unsafeMake(0)
      })
      const expected = sourceType === "operator" ? 3 : sourceType === "ingest" || sourceType === "unknown" ? 1 : 2
      expect(record.trustTier).toBe(expected)
      expect(record.reviewState).toBe(expected === 3 ? "confirmed" : "pending")
    }
  )

  it.prop(
    "expiresInDays becomes an expiry that many days after creation, to the millisecond",
    [fc.integer({ min: 0, max: 4_000_000_000_000 }), fc.integer({ min: 1, max: 36_500_000 }).map((n) => n / 1000)],
    ([now, days]) => {
      const record = MemoryRecord.fromWriteInput({ content: "x", kind: "note", expiresInDays: days }, {
        id: "r",
        now: DateTime.unsafeMake(now)
      })
      expect(record.expiresAt && DateTime.toEpochMillis(record.expiresAt)).toBe(now + Math.round(days * 86_400_000))
    }
  )
})

const encode = Schema.encodeSync(MemoryRecord.MemoryRecord)

describe("building a record", () => {
  // What `fromWriteInput` built before it skipped the class constructor (issue #25): the same
  // fields, spread in the same order, through `new MemoryRecord(…, { disableValidation: true })`.
  const byConstructor = (
    input: MemoryRecord.MemoryWriteInput,
    options: { readonly id: string; readonly now: DateTime.Utc; readonly scope?: string; readonly supersedes?: string }
  ) =>
    new MemoryRecord.MemoryRecord({
      id: options.id,
      content: input.content,
      kind: input.kind,
      ...(input.label !== undefined ? { label: input.label } : {}),
      tags: input.tags ?? [],
      sourceType: input.sourceType ?? "unknown",
      scope: input.scope ?? options.scope ?? "global",
      deliveryPolicy: input.deliveryPolicy ?? "retrieved",
      reviewState: MemoryRecord.initialReviewStateOf(input),
      createdAt: options.now,
      ...(input.epoch !== undefined ? { epoch: input.epoch } : {}),
      ...(input.expiresInDays !== undefined
        ? {
          expiresAt: DateTime.unsafeMake(
            DateTime.toEpochMillis(options.now) + Math.round(input.expiresInDays * 86_400_000)
          )
        }
        : {}),
      ...(options.supersedes !== undefined ? { supersedes: options.supersedes } : {}),
      ...(input.position !== undefined ? { position: input.position } : {}),
      ...(input.validFrom !== undefined ? { validFrom: input.validFrom } : {}),
      ...(input.validTo !== undefined ? { validTo: input.validTo } : {})
    }, { disableValidation: true })

  it.prop(
    "builds what the class constructor builds: the same fields, keys in the same order, a MemoryRecord that encodes alike",
    [
      Arbitrary.make(MemoryRecord.MemoryWriteInput),
      fc.integer({ min: 0, max: 4_000_000_000_000 }),
      fc.option(fc.constantFrom("project:p", "session:s"), { nil: undefined }),
      fc.option(fc.constant("older"), { nil: undefined })
    ],
    ([input, now, scope, supersedes]) => {
      const options = {
        id: "r",
        now: DateTime.unsafeMake(now),
        ...(scope !== undefined ? { scope } : {}),
        ...(supersedes !== undefined ? { supersedes } : {})
      }
      const built = MemoryRecord.fromWriteInput(input, options)
      const expected = byConstructor(input, options)
      expect(built).toBeInstanceOf(MemoryRecord.MemoryRecord)
      expect(Object.getPrototypeOf(built)).toBe(Object.getPrototypeOf(expected))
      expect(built).toStrictEqual(expected)
      expect(Reflect.ownKeys(built)).toEqual(Reflect.ownKeys(expected))
      expect(Schema.is(MemoryRecord.MemoryRecord)(built)).toBe(true)
      expect(encode(built)).toEqual(encode(expected))
      expect(String(built)).toBe(String(expected))
      expect([built.trustTier, built.flagged]).toEqual([expected.trustTier, expected.flagged])
    },
    { fastCheck: { numRuns: 500 } }
  )
})
