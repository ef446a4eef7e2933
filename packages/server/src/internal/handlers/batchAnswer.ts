/**
 * The answers to the write routes, serialised without walking their schemas item by item.
 *
 * A stored record and its promotion rows hold only strings, numbers, literals, arrays, plain
 * objects and `DateTime.Utc`s, and a `DateTime.Utc` serialises (`toJSON`) to the ISO text that
 * `Schema.DateTimeUtc` encodes it as. So `JSON.stringify` of an answer as the handler holds it is
 * the body `HttpApi` would send after encoding it with `CreatedAnswer` or `BatchWriteAnswer`,
 * which re-checks every field of every record the store has just checked (decisions 0223 and
 * 0228). The tests beside the write routes hold the two to the same JSON for a record with every
 * field set.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { BatchWriteAnswer, CreatedAnswer } from "../../EngramApi.js"

/**
 * The `201` answer to `POST /api/memories/batch`, the results serialised as they are.
 *
 * @internal
 */
export const batchWritten = (answer: typeof BatchWriteAnswer.Type): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(answer, { status: 201 })

/**
 * The `201` answer to `POST /api/memories`, the record and its promotion rows serialised as they are.
 *
 * @internal
 */
export const created = (answer: typeof CreatedAnswer.Type): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(answer, { status: 201 })
