import type * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { ErrorClass, type MemoryQuery, type MemoryRecord, type ProjectionLayout } from "@engram/core"
import type { StablePrefix } from "@engram/runtime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Layer from "effect/Layer"
import {
  type Access,
  type Authorization,
  BadRequest,
  Conflict,
  InsufficientStorage,
  NotFound,
  ReadOnlyToken,
  Unavailable
} from "../../EngramApi.js"

/**
 * One group's handlers: built from `R` (what the group's handlers use) with the caller's
 * `Authorization` at hand, failing with `E` while they are built.
 */
export type GroupLayer<Name extends string, E, R> = Layer.Layer<
  HttpApiGroup.ApiGroup<"engram", Name>,
  E,
  R | Authorization
>

/**
 * What the server composes for the agent and projection views: the agent's config, and the
 * working state and skills index its runtime gives every turn (none by default).
 */
export interface ServerConfig {
  readonly agent: StablePrefix.AgentConfig
  readonly workingState?: string | undefined
  readonly skills?: ReadonlyArray<ProjectionLayout.SkillRow> | undefined
}

/** The HTTP errors a store or runtime failure becomes. */
export type HttpFailure = NotFound | Conflict | BadRequest | Unavailable | InsufficientStorage

/** The HTTP error each class of failure answers (its status is the error's, see `EngramApi`). */
const answers: {
  readonly [C in ErrorClass.ErrorClass]: new(props: { readonly message: string }) => HttpFailure
} = {
  InvalidInput: BadRequest,
  NotFound,
  Conflict,
  Misconfigured: Unavailable,
  Unavailable,
  StorageFull: InsufficientStorage
}

/**
 * A store or runtime failure as the HTTP error a caller can act on; what the caller cannot fix
 * (the store failed, is full, or the configuration is broken) is logged with its class first.
 */
export const toHttp = (error: ErrorClass.Classifiable): Effect.Effect<never, HttpFailure> => {
  const errorClass = ErrorClass.classify(error)
  const answer = Effect.fail(new answers[errorClass]({ message: error.message }))
  return errorClass === "Unavailable" || errorClass === "StorageFull" || errorClass === "Misconfigured"
    ? Effect.zipRight(
      Effect.logError("request failed").pipe(Effect.annotateLogs({ errorClass, problem: error.message })),
      answer
    )
    : answer
}

/** Runs a store or runtime effect, its failures answered as HTTP errors (`toHttp`). */
export const http = <A, E extends ErrorClass.Classifiable, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catchAll(self, toHttp)

const notInScope = (scope: string) => new NotFound({ message: `no scope ${scope} for this token` })

/** The scopes a read covers: the token's, or the requested ones when the token holds them all. */
export const readScopes = (access: Access, requested: ReadonlyArray<MemoryRecord.Scope> | undefined) => {
  if (requested === undefined) return Effect.succeed(access.scopes)
  const foreign = requested.find((scope) => !access.scopes.includes(scope))
  return foreign === undefined ? Effect.succeed(requested) : Effect.fail(notInScope(foreign))
}

/** One scope: the requested one (held by the token), or the token's only scope. */
export const scopeOf = (
  access: Access,
  requested: MemoryRecord.Scope | undefined
): Either.Either<MemoryRecord.Scope, NotFound | BadRequest> => {
  if (requested !== undefined) {
    return access.scopes.includes(requested) ? Either.right(requested) : Either.left(notInScope(requested))
  }
  const [only, ...rest] = access.scopes
  return only !== undefined && rest.length === 0
    ? Either.right(only)
    : Either.left(new BadRequest({ message: `name a scope: this token holds ${access.scopes.join(", ")}` }))
}

/** {@link scopeOf} as an effect (an `Either` is one). */
export const oneScope = (
  access: Access,
  requested: MemoryRecord.Scope | undefined
): Effect.Effect<MemoryRecord.Scope, NotFound | BadRequest> => scopeOf(access, requested)

/**
 * The server assigns every id it creates (decision 0048): a caller's id could be taken by a record
 * of a scope it cannot see, and answering "taken" would say that record exists. One refusal, the
 * same whatever the id, tells nothing.
 */
export const assignedIds = (input: { readonly id?: string | undefined }) =>
  input.id === undefined ? Effect.void : Effect.fail(callerId())

const callerId = () =>
  new BadRequest({
    message: "remove \"id\": the server assigns the id of every record it creates (the answer carries it)"
  })

/** Refuses a write for a read-only token. */
export const writable = (access: Access) => access.readOnly ? Effect.fail(readOnly(access)) : Effect.void

const readOnly = (access: Access) => new ReadOnlyToken({ message: `token "${access.label}" is read-only` })

/**
 * The records a create request stores, each in its scope, or the first refusal: a read-only
 * token, then input by input a caller-chosen id or a scope the token does not hold (in that order,
 * as {@link writable}, {@link assignedIds} and {@link oneScope} refuse them). Plain checks, no
 * effect per input: this runs on every write request.
 */
export const creatable = (
  access: Access,
  inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>
): Either.Either<Array<MemoryRecord.MemoryWriteInput>, ReadOnlyToken | BadRequest | NotFound> => {
  if (access.readOnly) return Either.left(readOnly(access))
  const scoped: Array<MemoryRecord.MemoryWriteInput> = []
  for (const input of inputs) {
    if (input.id !== undefined) return Either.left(callerId())
    const scope = scopeOf(access, input.scope)
    if (Either.isLeft(scope)) return Either.left(scope.left)
    scoped.push({ ...input, scope: scope.right })
  }
  return Either.right(scoped)
}

/** A query parameter given once or repeated, as a list. */
export const asArray = <A>(value: A | ReadonlyArray<A> | undefined): ReadonlyArray<A> | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value as A]

/** The listing filters a route's query parameters carry. */
export interface FilterParams {
  readonly scope?: MemoryRecord.Scope | ReadonlyArray<MemoryRecord.Scope> | undefined
  readonly kind?: MemoryRecord.MemoryKind | ReadonlyArray<MemoryRecord.MemoryKind> | undefined
  readonly review?: MemoryRecord.ReviewState | ReadonlyArray<MemoryRecord.ReviewState> | undefined
  readonly delivery?: MemoryRecord.DeliveryPolicy | ReadonlyArray<MemoryRecord.DeliveryPolicy> | undefined
  readonly deliverable?: "true" | "false" | undefined
  readonly includeSuperseded?: "true" | "false" | undefined
  readonly limit?: number | undefined
}

/** The store filters a listing asks for, within the scopes the token holds. */
export const filtersOf = (access: Access, params: FilterParams) =>
  Effect.map(readScopes(access, asArray(params.scope)), (scopes): MemoryQuery.MemoryFilters & { limit?: number } => {
    const kinds = asArray(params.kind)
    const reviewStates = asArray(params.review)
    const deliveryPolicies = asArray(params.delivery)
    return {
      scopes,
      ...(kinds !== undefined ? { kinds } : {}),
      ...(reviewStates !== undefined ? { reviewStates } : {}),
      ...(deliveryPolicies !== undefined ? { deliveryPolicies } : {}),
      ...(params.deliverable === "true" ? { deliverable: true } : {}),
      ...(params.includeSuperseded === "true" ? { includeSuperseded: true } : {}),
      ...(params.limit !== undefined ? { limit: params.limit } : {})
    }
  })
