/**
 * Numbers with a named range: the schema every tuning option is decoded with, and its message,
 * written once. A value out of range fails naming the field and the range, e.g. "k1 must be a
 * number from 0 to 10" — what an operator reads when an agent file or a layer option is wrong.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/**
 * A number from `min` to `max` inclusive; anything else (out of range, not a number) fails with
 * one message naming `field` and the range.
 *
 * @example
 * ```ts
 * import { Bounded } from "@engram/core"
 * import * as Schema from "effect/Schema"
 *
 * const Options = Schema.Struct({ weight: Bounded.number("weight", 0, 1) })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const number = (field: string, min: number, max: number): Schema.filter<typeof Schema.Number> =>
  Schema.Number.pipe(
    Schema.between(min, max),
    Schema.annotations({
      message: () => ({ message: `${field} must be a number from ${min} to ${max}`, override: true })
    })
  )

/**
 * An integer from `min` to `max` inclusive; anything else (out of range, fractional, not a number)
 * fails with one message naming `field` and the range.
 *
 * @since 0.1.0
 * @category schemas
 */
export const int = (field: string, min: number, max: number): Schema.filter<typeof Schema.Int> =>
  Schema.Int.pipe(
    Schema.between(min, max),
    Schema.annotations({
      message: () => ({ message: `${field} must be an integer from ${min} to ${max}`, override: true })
    })
  )
