/**
 * The Engram HTTP API, declared once with `@effect/platform`'s `HttpApi`: every route, its
 * parameters, body and answers as schemas. The server decodes requests with them, the OpenAPI
 * document is generated from them, and the fuzz test draws requests from them.
 *
 * Every route sits behind {@link Authorization} (a bearer token) and acts inside the token's
 * scopes: another scope's records answer 404, exactly like records that do not exist.
 *
 * @since 0.1.0
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import {
  MemoryForget,
  MemoryQuery,
  MemoryRecord,
  ProjectionLayout,
  PromotionStore,
  PromptFragment,
  PromptSnapshot,
  SessionStore,
  SessionSummary
} from "@engram/core"
import * as Context from "effect/Context"
import * as Schema from "effect/Schema"

// ---------------------------------------------------------------------------------------------
// Errors: each carries a message a person can act on, and its HTTP status.
// ---------------------------------------------------------------------------------------------

/** The HTTP status of each error the API answers, written once (the OpenAPI document reads it too). */
const statuses = {
  Unauthorized: 401,
  ReadOnlyToken: 403,
  NotFound: 404,
  BadRequest: 400,
  Conflict: 409,
  Unavailable: 503,
  InsufficientStorage: 507
} as const

/** An API error: a message a person can act on, answered with its tag's status. */
const httpError = <Self>() => <const Tag extends keyof typeof statuses>(tag: Tag) =>
  Schema.TaggedError<Self>()(tag, { message: Schema.String }, HttpApiSchema.annotations({ status: statuses[tag] }))

/**
 * No token, or a token this server does not know (401).
 *
 * @since 0.1.0
 * @category errors
 */
export class Unauthorized extends httpError<Unauthorized>()("Unauthorized") {}

/**
 * A write with a read-only token (403).
 *
 * @since 0.1.0
 * @category errors
 */
export class ReadOnlyToken extends httpError<ReadOnlyToken>()("ReadOnlyToken") {}

/**
 * No such record, or not in the token's scopes — the two are indistinguishable on purpose (404).
 *
 * @since 0.1.0
 * @category errors
 */
export class NotFound extends httpError<NotFound>()("NotFound") {}

/**
 * A request that decodes but cannot be carried out as asked (400).
 *
 * @since 0.1.0
 * @category errors
 */
export class BadRequest extends httpError<BadRequest>()("BadRequest") {}

/**
 * The record's state forbids the change (already superseded, duplicate id) (409).
 *
 * @since 0.1.0
 * @category errors
 */
export class Conflict extends httpError<Conflict>()("Conflict") {}

/**
 * The store failed, or could not be reached (503): retry later — the answer carries `Retry-After`
 * (seconds); the message says what failed. A token that cannot be checked because the store is
 * down is this, never 401.
 *
 * @since 0.1.0
 * @category errors
 */
export class Unavailable extends httpError<Unavailable>()("Unavailable") {}

/**
 * The store has no room left to write (a full disk, a size cap) (507): the write stored nothing,
 * and every write answered before it is kept. Free space, then retry.
 *
 * @since 0.1.0
 * @category errors
 */
export class InsufficientStorage extends httpError<InsufficientStorage>()("InsufficientStorage") {}

// ---------------------------------------------------------------------------------------------
// Access
// ---------------------------------------------------------------------------------------------

/**
 * Who is calling: the token's id and label, its scopes (never empty) and whether it may write.
 *
 * @since 0.1.0
 * @category models
 */
export interface Access {
  readonly tokenId: string
  readonly label: string
  readonly scopes: ReadonlyArray<MemoryRecord.Scope>
  readonly readOnly: boolean
}

/**
 * The caller of the current request, provided by {@link Authorization}.
 *
 * @since 0.1.0
 * @category tags
 */
export class CurrentAccess extends Context.Tag("@engram/server/CurrentAccess")<CurrentAccess, Access>() {}

/**
 * Bearer-token authorization for every route: 401 for no token or an unknown one, 503 when the
 * token store cannot be read (an outage is not a bad token).
 *
 * @since 0.1.0
 * @category middleware
 */
export class Authorization extends HttpApiMiddleware.Tag<Authorization>()("Authorization", {
  failure: Schema.Union(Unauthorized, Unavailable),
  provides: CurrentAccess,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

// ---------------------------------------------------------------------------------------------
// Parameters and bodies
// ---------------------------------------------------------------------------------------------

/** One value or several (a repeated query parameter). */
const many = <A, I extends string>(schema: Schema.Schema<A, I>) => Schema.Union(Schema.Array(schema), schema)

const Limit = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "limit must be a whole number" }),
  Schema.between(1, MemoryQuery.MAX_LIMIT, { message: () => `limit must be from 1 to ${MemoryQuery.MAX_LIMIT}` })
)

const Flag = Schema.Literal("true", "false")

const filterParams = {
  scope: Schema.optional(many(MemoryRecord.Scope)),
  kind: Schema.optional(many(MemoryRecord.MemoryKind)),
  review: Schema.optional(many(MemoryRecord.ReviewState)),
  delivery: Schema.optional(many(MemoryRecord.DeliveryPolicy)),
  deliverable: Schema.optional(Flag),
  includeSuperseded: Schema.optional(Flag),
  limit: Schema.optional(Limit)
}

/**
 * Listing parameters: the filters, a page size and the cursor of the previous page.
 *
 * @since 0.1.0
 * @category parameters
 */
export const ListParams = Schema.Struct({ ...filterParams, cursor: Schema.optional(Schema.String) })

/**
 * Search parameters: the text (`q`) and the filters.
 *
 * @since 0.1.0
 * @category parameters
 */
export const SearchParams = Schema.Struct({
  ...filterParams,
  q: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2_000))
})

/**
 * A record's id in the path.
 *
 * @since 0.1.0
 * @category parameters
 */
export const IdPath = Schema.Struct({ id: MemoryRecord.MemoryId })

/**
 * An optional scope (the token's only scope when it has one).
 *
 * @since 0.1.0
 * @category parameters
 */
export const ScopeParams = Schema.Struct({ scope: Schema.optional(MemoryRecord.Scope) })

/**
 * Projection preview parameters: the query, the scope and the instant to project as of.
 *
 * @since 0.1.0
 * @category parameters
 */
export const ProjectionParams = Schema.Struct({
  q: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2_000)),
  scope: Schema.optional(MemoryRecord.Scope),
  /** World time to project as of (ISO 8601, decision 0175): the values valid then. Absent, now. */
  asOf: Schema.optional(Schema.DateTimeUtc)
})

const Position = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "turn and call are whole numbers" }),
  Schema.between(0, 1_000_000, { message: () => "turn and call are from 0 to 1000000" })
)

/**
 * A session's id in the path.
 *
 * @since 0.1.0
 * @category parameters
 */
export const SessionPath = Schema.Struct({ session: SessionStore.SessionId })

/**
 * Narrows a session's stored calls to one turn and/or one call.
 *
 * @since 0.1.0
 * @category parameters
 */
export const CallParams = Schema.Struct({ turn: Schema.optional(Position), call: Schema.optional(Position) })

/**
 * Explain parameters: the session whose stored calls to explain (without one: every stored call of
 * the sessions the token may see), optionally one turn and one call.
 *
 * @since 0.1.0
 * @category parameters
 */
export const ExplainParams = Schema.Struct({
  session: Schema.optional(SessionStore.SessionId),
  turn: Schema.optional(Position),
  call: Schema.optional(Position)
})

const Offset = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "offset must be a whole number" }),
  Schema.between(0, MemoryQuery.MAX_LIMIT, { message: () => `offset must be from 0 to ${MemoryQuery.MAX_LIMIT}` })
)

/**
 * A record's lifecycle as the console shows it (`MemoryQuery.Lifecycle`).
 *
 * @since 0.1.0
 * @category parameters
 */
export const Lifecycle = Schema.Literal("pending", "confirmed", "rejected", "superseded", "invalidated", "expired")

/**
 * The columns a browse can sort by.
 *
 * @since 0.1.0
 * @category parameters
 */
export const BrowseSort = Schema.Literal(
  "created",
  "id",
  "content",
  "kind",
  "label",
  "source",
  "trust",
  "state",
  "score"
)

/**
 * The most rows one browse page holds.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_BROWSE_PAGE = 200

/**
 * Browse parameters: optional search text (`q`), the scope and kind filters, lifecycle states
 * and the flag, a sort column and direction, and the page (`offset`, `limit` up to
 * {@link MAX_BROWSE_PAGE}).
 *
 * @since 0.1.0
 * @category parameters
 */
export const BrowseParams = Schema.Struct({
  q: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2_000))),
  scope: Schema.optional(many(MemoryRecord.Scope)),
  kind: Schema.optional(many(MemoryRecord.MemoryKind)),
  state: Schema.optional(many(Lifecycle)),
  flagged: Schema.optional(Flag),
  sort: Schema.optional(BrowseSort),
  order: Schema.optional(Schema.Literal("asc", "desc")),
  offset: Schema.optional(Offset),
  limit: Schema.optional(Schema.NumberFromString.pipe(
    Schema.int({ message: () => "limit must be a whole number" }),
    Schema.between(1, MAX_BROWSE_PAGE, { message: () => `limit must be from 1 to ${MAX_BROWSE_PAGE}` })
  ))
})

/**
 * The body of a bulk review: up to 500 ids and the state they all take.
 *
 * @since 0.1.0
 * @category payloads
 */
export const BulkReviewBody = Schema.Struct({
  ids: Schema.Array(MemoryRecord.MemoryId).pipe(
    Schema.minItems(1, { message: () => "name at least one id" }),
    Schema.maxItems(500, { message: () => "review at most 500 ids at once" })
  ),
  state: MemoryRecord.ReviewState
})

/**
 * The most records one batch write takes ({@link BatchWriteBody}).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_BATCH_WRITE = 1_000

/**
 * The body of a batch write: 1 to {@link MAX_BATCH_WRITE} records, each what a single create
 * takes. The batch is stored in one transaction, whole or not at all: one record refused (it is
 * named by its `index`) stores none of them.
 *
 * @since 0.1.0
 * @category payloads
 */
export const BatchWriteBody = Schema.Struct({
  records: Schema.Array(MemoryRecord.MemoryWriteInput).pipe(
    Schema.minItems(1, { message: () => "name at least one record" }),
    Schema.maxItems(MAX_BATCH_WRITE, {
      message: () => `write at most ${MAX_BATCH_WRITE} records in one batch (MAX_BATCH_WRITE); split the batch`
    })
  )
})

/**
 * The body of a review.
 *
 * @since 0.1.0
 * @category payloads
 */
export const ReviewBody = Schema.Struct({ state: MemoryRecord.ReviewState })

// ---------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------

/**
 * One link of a record's history (its supersession chain, oldest first).
 *
 * @since 0.1.0
 * @category answers
 */
export const HistoryLink = Schema.Struct({
  id: Schema.String,
  state: Schema.Literal("stored", "forgotten", "missing"),
  record: Schema.optional(MemoryRecord.MemoryRecord),
  tombstone: Schema.optional(MemoryForget.Tombstone)
})

/** @since 0.1.0 @category answers */
export const ListAnswer = Schema.Struct({
  records: Schema.Array(MemoryRecord.MemoryRecord),
  nextCursor: Schema.optional(Schema.String),
  skipped: Schema.Number
})

/**
 * One browse row: the record and what the console shows beside it — its trust tier, whether the
 * poisoning screen flags it, its lifecycle, its search score (`null` without `q`) and its
 * promotion rows (where it would compose).
 *
 * @since 0.1.0
 * @category answers
 */
export const BrowseRow = Schema.Struct({
  record: MemoryRecord.MemoryRecord,
  trustTier: MemoryRecord.TrustTier,
  flagged: Schema.Boolean,
  state: Lifecycle,
  score: Schema.NullOr(Schema.Number),
  promotions: Schema.Array(PromotionStore.PromotionRow)
})

/**
 * A browse page: `total` rows match, this page starts at `offset`. `truncated` says the store
 * held more candidates than one browse reads (`MemoryQuery.MAX_LIMIT`): narrow the filters.
 *
 * @since 0.1.0
 * @category answers
 */
export const BrowseAnswer = Schema.Struct({
  total: Schema.Number,
  offset: Schema.Number,
  limit: Schema.Number,
  truncated: Schema.Boolean,
  rows: Schema.Array(BrowseRow)
})

/** @since 0.1.0 @category answers */
export const RecordsAnswer = Schema.Struct({ records: Schema.Array(MemoryRecord.MemoryRecord) })

/** @since 0.1.0 @category answers */
export const SearchAnswer = Schema.Struct({
  hits: Schema.Array(Schema.Struct({ record: MemoryRecord.MemoryRecord, score: Schema.Number })),
  skipped: Schema.Number
})

/** @since 0.1.0 @category answers */
export const DetailAnswer = Schema.Struct({
  record: MemoryRecord.MemoryRecord,
  /** Its lifecycle now and its trust tier. */
  state: Lifecycle,
  trustTier: MemoryRecord.TrustTier,
  history: Schema.Array(HistoryLink),
  promotions: Schema.Array(PromotionStore.PromotionRow),
  /** The poisoning screen's verdict on the record (derived from its text; decision 0067). */
  flagged: Schema.Boolean,
  flaggedFor: Schema.Array(Schema.String),
  /** The session and turns an extracted memory came from (`TurnProvenance.of`), or null. */
  source: Schema.NullOr(Schema.Struct({
    session: Schema.String,
    hashed: Schema.Boolean,
    turns: Schema.NullOr(Schema.Struct({ first: Schema.Number, last: Schema.Number }))
  })),
  /** For a supersede proposal: the memory it would supersede once an operator approves it. */
  proposesToSupersede: Schema.NullOr(Schema.String)
})

/** @since 0.1.0 @category answers */
export const RecordAnswer = Schema.Struct({ record: MemoryRecord.MemoryRecord })

/** @since 0.1.0 @category answers */
export const CreatedAnswer = Schema.Struct({
  record: MemoryRecord.MemoryRecord,
  promotions: Schema.Array(PromotionStore.PromotionRow)
})

/**
 * A stored batch: one result per record of the body, in its order — the record as stored (with
 * the id the server assigned) and the promotion rows it earned.
 *
 * @since 0.1.0
 * @category answers
 */
export const BatchWriteAnswer = Schema.Struct({ results: Schema.Array(CreatedAnswer) })

/** @since 0.1.0 @category answers */
export const SupersededAnswer = Schema.Struct({
  superseded: MemoryRecord.MemoryRecord,
  successor: MemoryRecord.MemoryRecord,
  promotions: Schema.Array(PromotionStore.PromotionRow)
})

/** @since 0.1.0 @category answers */
export const ForgetAnswer = Schema.Struct({ tombstones: Schema.Array(MemoryForget.Tombstone) })

/** @since 0.1.0 @category answers */
export const PromotionsAnswer = Schema.Struct({ rows: Schema.Array(PromotionStore.PromotionRow) })

/** @since 0.1.0 @category answers */
export const AccessAnswer = Schema.Struct({
  label: Schema.String,
  scopes: Schema.Array(MemoryRecord.Scope),
  readOnly: Schema.Boolean
})

/**
 * An agent's composition: the prefix sections with attributed fragments (authored, or memory with
 * its record ids), the prompt text, the ids composed into the prefix, the overlay report (ids,
 * addresses and reasons; never content) and, beside it, the records the report names that the
 * token may see (so the console can show their content and offer a fix).
 *
 * @since 0.1.0
 * @category answers
 */
export const AgentAnswer = Schema.Struct({
  scope: MemoryRecord.Scope,
  spec: Schema.NullOr(Schema.String),
  prefix: Schema.Array(PromptFragment.AgentPromptSectionData),
  text: Schema.String,
  composedIds: Schema.Array(Schema.String),
  report: Schema.Unknown,
  records: Schema.Array(MemoryRecord.MemoryRecord)
})

/**
 * One attributed piece of a composed model request (`ModelRequest.RequestFragment`): the message
 * it sits in, that message's role, where its bytes came from, its label, its text and the
 * memories it carries.
 *
 * @since 0.1.0
 * @category answers
 */
export const RequestFragment = Schema.Struct({
  message: Schema.Int,
  role: Schema.String,
  source: Schema.String,
  label: Schema.String,
  text: Schema.String,
  memoryIds: Schema.Array(Schema.String)
}).annotations({ identifier: "RequestFragment" })

/**
 * A projection preview for a query: the per-section report, the budget summary, the ids the
 * envelope delivers, and the text; and `request`, the fragments of the first model call a native
 * agent of the server's config would send for it in that scope — composed by `Turn.compose`, as
 * every transport composes (decision 0166), so the preview shows the bytes a model would get.
 * Nothing is recorded.
 *
 * @since 0.1.0
 * @category answers
 */
export const ProjectionAnswer = Schema.Struct({
  scope: MemoryRecord.Scope,
  projection: ProjectionLayout.ProjectedContext,
  request: Schema.Array(RequestFragment)
})

/**
 * The sessions the token may see (`ScopeView.sessionShown`), newest first, each with its turns,
 * messages, stored calls and when the last was sent (`SessionSummary`), and the scopes its
 * stored calls read.
 *
 * @since 0.1.0
 * @category answers
 */
export const SessionsAnswer = Schema.Struct({
  sessions: Schema.Array(Schema.Struct({
    ...SessionSummary.SessionSummary.fields,
    /** The memory scopes its stored calls' projections read, sorted. */
    scopes: Schema.Array(MemoryRecord.Scope)
  }))
})

/**
 * A session's stored prompt snapshots (references, sizes, ids and hashes; full text only where
 * capture was switched on).
 *
 * @since 0.1.0
 * @category answers
 */
export const SnapshotsAnswer = Schema.Struct({
  sessionId: Schema.String,
  snapshots: Schema.Array(PromptSnapshot.PromptSnapshot)
})

/**
 * A session's stored calls rebuilt from the trajectory (`Inspect`): per call, whether the rebuild
 * hashes to what was sent, the memories redacted since, the fragments (text, source, memory ids)
 * and the projection's sections and budget.
 *
 * @since 0.1.0
 * @category answers
 */
export const InspectAnswer = Schema.Struct({
  sessionId: Schema.String,
  calls: Schema.Array(Schema.Struct({
    turn: Schema.Number,
    call: Schema.Number,
    verified: Schema.Boolean,
    redacted: Schema.Array(Schema.String),
    fragments: Schema.Unknown,
    sections: Schema.Array(ProjectionLayout.SectionReport),
    budget: ProjectionLayout.BudgetSummary
  }))
})

/**
 * Why a memory did or did not reach stored calls (`Explain.Explanation`).
 *
 * @since 0.1.0
 * @category answers
 */
export const ExplainAnswer = Schema.Unknown

// ---------------------------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------------------------

/**
 * A body schema that refuses fields it does not declare (400, the field named in the issue's
 * path), as the OpenAPI document says (`additionalProperties: false`): a misspelt field must not
 * be dropped silently and the record stored without it.
 */
const strict = <A, I, R>(schema: Schema.Schema<A, I, R>): Schema.Schema<A, I, R> =>
  schema.annotations({ parseOptions: { onExcessProperty: "error" } })

/**
 * What every store-backed group shares: the errors its handlers answer (a store or runtime failure
 * through its class, see `ErrorClass`), the bearer token, the `/api` prefix.
 */
const behindTheToken = <Id extends string, Endpoints extends HttpApiEndpoint.HttpApiEndpoint.Any, E, R>(
  group: HttpApiGroup.HttpApiGroup<Id, Endpoints, E, R>
) =>
  group
    .addError(NotFound)
    .addError(BadRequest)
    .addError(Conflict)
    .addError(Unavailable)
    .addError(InsufficientStorage)
    .middleware(Authorization)
    .prefix("/api")

/**
 * Memories: list, search, browse (sorted pages with totals), get (with history and promotion
 * rows), create (one, or a batch of up to {@link MAX_BATCH_WRITE} in one transaction), review (one,
 * or many at once), supersede, expire, forget, tombstones.
 *
 * @since 0.1.0
 * @category groups
 */
export class MemoriesGroup extends HttpApiGroup.make("memories")
  .add(HttpApiEndpoint.get("list", "/memories").setUrlParams(ListParams).addSuccess(ListAnswer))
  .add(HttpApiEndpoint.get("search", "/memories/search").setUrlParams(SearchParams).addSuccess(SearchAnswer))
  .add(HttpApiEndpoint.get("browse", "/memories/browse").setUrlParams(BrowseParams).addSuccess(BrowseAnswer))
  .add(
    HttpApiEndpoint.post("reviewMany", "/memories/review").setPayload(strict(BulkReviewBody)).addSuccess(RecordsAnswer)
  )
  .add(HttpApiEndpoint.get("get", "/memories/:id").setPath(IdPath).addSuccess(DetailAnswer))
  .add(
    HttpApiEndpoint.post("create", "/memories").setPayload(strict(MemoryRecord.MemoryWriteInput))
      .addSuccess(CreatedAnswer, { status: 201 })
  )
  .add(
    HttpApiEndpoint.post("createMany", "/memories/batch").setPayload(strict(BatchWriteBody))
      .addSuccess(BatchWriteAnswer, { status: 201 })
  )
  .add(
    HttpApiEndpoint.post("review", "/memories/:id/review").setPath(IdPath).setPayload(strict(ReviewBody)).addSuccess(
      RecordAnswer
    )
  )
  .add(
    HttpApiEndpoint.post("supersede", "/memories/:id/supersede").setPath(IdPath)
      .setPayload(strict(MemoryRecord.MemoryWriteInput)).addSuccess(SupersededAnswer)
  )
  .add(HttpApiEndpoint.post("expire", "/memories/:id/expire").setPath(IdPath).addSuccess(RecordAnswer))
  .add(HttpApiEndpoint.del("forget", "/memories/:id").setPath(IdPath).addSuccess(ForgetAnswer))
  .add(
    HttpApiEndpoint.post("forgetMany", "/forget").setPayload(strict(MemoryForget.ForgetTarget)).addSuccess(ForgetAnswer)
  )
  .add(HttpApiEndpoint.get("tombstones", "/tombstones").setUrlParams(ScopeParams).addSuccess(ForgetAnswer))
  .addError(ReadOnlyToken)
  .pipe(behindTheToken)
{}

/**
 * Composition: promotion rows, the agent's composed prefix with its overlay report, and a
 * projection preview for a query.
 *
 * @since 0.1.0
 * @category groups
 */
export class CompositionGroup extends HttpApiGroup.make("composition")
  .add(HttpApiEndpoint.get("promotions", "/promotions").setUrlParams(ScopeParams).addSuccess(PromotionsAnswer))
  .add(HttpApiEndpoint.get("agent", "/agent").setUrlParams(ScopeParams).addSuccess(AgentAnswer))
  .add(HttpApiEndpoint.get("projection", "/projection").setUrlParams(ProjectionParams).addSuccess(ProjectionAnswer))
  .pipe(behindTheToken)
{}

/**
 * Sessions: stored prompt snapshots, the calls rebuilt from the trajectory (inspect), and why a
 * memory did or did not reach them (explain). A session is visible to a token only when every
 * stored call of it read scopes the token holds and carried only memories of those scopes, prefix
 * included (`ScopeView.sessionShown`); any other session is "not found".
 *
 * @since 0.1.0
 * @category groups
 */
export class SessionsGroup extends HttpApiGroup.make("sessions")
  .add(HttpApiEndpoint.get("list", "/sessions").addSuccess(SessionsAnswer))
  .add(
    HttpApiEndpoint.get("snapshots", "/sessions/:session/snapshots").setPath(SessionPath).setUrlParams(CallParams)
      .addSuccess(SnapshotsAnswer)
  )
  .add(
    HttpApiEndpoint.get("inspect", "/sessions/:session/inspect").setPath(SessionPath).setUrlParams(CallParams)
      .addSuccess(InspectAnswer)
  )
  .add(
    HttpApiEndpoint.get("explain", "/memories/:id/explain").setPath(IdPath).setUrlParams(ExplainParams)
      .addSuccess(ExplainAnswer)
  )
  .pipe(behindTheToken)
{}

/**
 * Access: who the token is (label, scopes, read-only).
 *
 * @since 0.1.0
 * @category groups
 */
export class AccessGroup extends HttpApiGroup.make("access")
  .add(HttpApiEndpoint.get("whoami", "/access").addSuccess(AccessAnswer))
  .middleware(Authorization)
  .prefix("/api")
{}

/**
 * The whole API.
 *
 * @since 0.1.0
 * @category api
 */
export class EngramApi extends HttpApi.make("engram")
  .add(MemoriesGroup)
  .add(CompositionGroup)
  .add(SessionsGroup)
  .add(AccessGroup)
{}
