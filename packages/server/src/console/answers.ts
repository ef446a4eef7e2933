/**
 * What the console sends and receives, as types taken from the HTTP API's own schemas
 * (`EngramApi`): each answer is the JSON its schema encodes (`Schema.Encoded`), so a field the
 * API renames or retypes fails the console's type check instead of its users. Types only — the
 * browser bundle carries no schema code.
 *
 * Three answers the API declares as `Schema.Unknown` (the agent's overlay report, a stored call's
 * fragments, an explanation) are typed here from the values the handlers send: core's
 * `MemoryOverlay.OverlayReport`, the runtime's `ModelRequest.RequestFragment` and
 * `Explain.Explanation`.
 */
import type { MemoryOverlay, MemoryRecord } from "@engram/core"
import type * as Explain from "@engram/runtime/Explain"
import type * as ModelRequest from "@engram/runtime/ModelRequest"
import type * as Schema from "effect/Schema"
import type * as EngramApi from "../EngramApi.js"

/** The JSON a schema encodes: what the browser reads off the wire. */
type Json<S extends Schema.Schema.Any> = Schema.Schema.Encoded<S>

/** `GET /api/access`: the token's label, scopes and read-only flag. */
export type Access = Json<typeof EngramApi.AccessAnswer>

/** A memory record as the API sends it. */
export type MemoryRecordJson = Json<typeof MemoryRecord.MemoryRecord>

/** A record's kind, as the create and edit forms offer it. */
export type MemoryKind = Json<typeof MemoryRecord.MemoryKind>

/** A delivery policy, as the create form offers it. */
export type DeliveryPolicy = Json<typeof MemoryRecord.DeliveryPolicy>

/** A record's lifecycle state (`MemoryQuery.lifecycleOf`), as the list filters by it. */
export type Lifecycle = Json<typeof EngramApi.Lifecycle>

/** A column `GET /api/memories/browse` sorts by. */
export type BrowseSort = Json<typeof EngramApi.BrowseSort>

/** `GET /api/memories/browse`: one sorted page of records with the total. */
export type BrowsePage = Json<typeof EngramApi.BrowseAnswer>

/** One row of a browse page. */
export type BrowseRow = BrowsePage["rows"][number]

/** A promotion row: where a record composes, or why it was declined. */
export type PromotionRow = BrowseRow["promotions"][number]

/** `GET /api/memories/:id`: the record, its lifecycle, history and promotion rows. */
export type Detail = Json<typeof EngramApi.DetailAnswer>

/** One link of a record's history chain. */
export type HistoryLink = Detail["history"][number]

/** The body of `POST /api/memories` and `POST /api/memories/:id/supersede`. */
export type WriteInput = Json<typeof MemoryRecord.MemoryWriteInput>

/** The body of `POST /api/memories/:id/review`. */
export type ReviewBody = Json<typeof EngramApi.ReviewBody>

/** The body of `POST /api/memories/review`. */
export type BulkReviewBody = Json<typeof EngramApi.BulkReviewBody>

/** A review state an operator can set. */
export type ReviewState = ReviewBody["state"]

/** `POST /api/memories/:id/review`, `/expire`: the record as it is now. */
export type RecordAnswer = Json<typeof EngramApi.RecordAnswer>

/** `POST /api/memories/review`: the records as they are now. */
export type RecordsAnswer = Json<typeof EngramApi.RecordsAnswer>

/** `POST /api/memories`: the created record and its promotion rows. */
export type Created = Json<typeof EngramApi.CreatedAnswer>

/** `POST /api/memories/:id/supersede`: the superseded record and its successor. */
export type Superseded = Json<typeof EngramApi.SupersededAnswer>

/** `DELETE /api/memories/:id`, `GET /api/tombstones`: tombstones. */
export type Forgotten = Json<typeof EngramApi.ForgetAnswer>

/** One tombstone: who forgot which id, when; never the text. */
export type Tombstone = Forgotten["tombstones"][number]

/** `GET /api/sessions`: the sessions the token may see. */
export type Sessions = Json<typeof EngramApi.SessionsAnswer>

/** One session of `GET /api/sessions`. */
export type SessionRow = Sessions["sessions"][number]

/** One attributed slice of a stored call's request. */
export type Fragment = ModelRequest.RequestFragment

/** One stored call rebuilt from the trajectory, its fragments typed (the API sends them untyped). */
export type InspectedCall = Omit<Json<typeof EngramApi.InspectAnswer>["calls"][number], "fragments"> & {
  readonly fragments: ReadonlyArray<Fragment>
}

/** `GET /api/sessions/:session/inspect`: the session's stored calls, rebuilt. */
export interface Inspected {
  readonly sessionId: string
  readonly calls: ReadonlyArray<InspectedCall>
}

/** A projection's per-section report, as the budget chart reads it. */
export type SectionReport = InspectedCall["sections"][number]

/** A projection's budget summary, as the budget chart reads it. */
export type BudgetSummary = InspectedCall["budget"]

/** `GET /api/memories/:id/explain`: why a memory did or did not reach stored calls. */
export type Explanation = Explain.Explanation

/** One stored call's verdict for a memory. */
export type CallExplanation = Explain.CallExplanation

/** One outcome of the overlay report: composed, or declined with a reason. */
export type OverlayOutcome = MemoryOverlay.OverlayOutcome

/** Why the overlay declined a row. */
export type DeclineReason = MemoryOverlay.DeclineReason

/** `GET /api/agent`: the composed prefix, the overlay report and the records it names. */
export type Agent = Omit<Json<typeof EngramApi.AgentAnswer>, "report"> & {
  readonly report: MemoryOverlay.OverlayReport
}

/** `GET /api/projection`: the projection a native turn would get for a query. */
export type Projection = Json<typeof EngramApi.ProjectionAnswer>
