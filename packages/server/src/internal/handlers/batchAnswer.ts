/**
 * The answer to a batch write, serialised without walking its schema item by item.
 *
 * A stored record and its promotion rows hold only strings, numbers, literals, arrays, plain
 * objects and `DateTime.Utc`s, and a `DateTime.Utc` serialises (`toJSON`) to the ISO text that
 * `Schema.DateTimeUtc` encodes it as. So `JSON.stringify` of the answer as the handler holds it is
 * the body `HttpApi` would send after encoding it with `BatchWriteAnswer`, which for 1,000 results
 * re-checks every field of every record the store has just checked (decision 0223). The test
 * beside the batch route holds the two to the same JSON for a record with every field set.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import type { BatchWriteAnswer } from "../../EngramApi.js"

/**
 * The `201` answer to `POST /api/memories/batch`, the results serialised as they are.
 *
 * @internal
 */
export const batchWritten = (answer: typeof BatchWriteAnswer.Type): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.unsafeJson(answer, { status: 201 })
