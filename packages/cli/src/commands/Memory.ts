/**
 * `engram memory …`: write, list, search, review, supersede, expire and import memories.
 *
 * Every subcommand validates its whole command line before it opens the store, so a refused
 * command never writes anything.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import type * as Options from "@effect/cli/Options"
import * as MemoryForget from "@engram/core/MemoryForget"
import * as MemoryQuery from "@engram/core/MemoryQuery"
import * as MemoryRecord from "@engram/core/MemoryRecord"
import * as MemoryStore from "@engram/core/MemoryStore"
import * as MemoryWrite from "@engram/core/MemoryWrite"
import * as Console from "effect/Console"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Embedder from "../Embedder.js"
import * as Flags from "../Flags.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

// ---------------------------------------------------------------------------------------------
// Options shared by several subcommands
// ---------------------------------------------------------------------------------------------

const kinds = MemoryRecord.MemoryKind.literals
const sourceTypes = MemoryRecord.SourceType.literals
const deliveryPolicies = MemoryRecord.DeliveryPolicy.literals
const reviewStates = MemoryRecord.ReviewState.literals

// The record's own field rules, read from its schemas so the command line and the store agree.
// Plain decimal only: Number("0x10") is 16 and Number("1e2") is 100, neither what a person typed.
const DecimalText = Schema.String.pipe(
  Schema.pattern(/^\d+(\.\d+)?$/, { message: () => "must be a plain decimal number of days, e.g. 30 or 1.5" })
)
const ExpiresInDays = Schema.compose(
  Schema.compose(DecimalText, Schema.NumberFromString),
  MemoryRecord.MemoryWriteInput.fields.expiresInDays.from
)
const Epoch = MemoryRecord.MemoryWriteInput.fields.epoch.from

const Limit = Schema.NumberFromString.pipe(
  Schema.int({ message: () => "must be a whole number" }),
  Schema.between(1, MemoryQuery.MAX_LIMIT, { message: () => `must be from 1 to ${MemoryQuery.MAX_LIMIT}` })
)

const kindFlag = Flags.choice("kind", kinds, "What the memory is.")

// The fields of a write: `add` requires `--kind`, `supersede` may take it from the original.
const writeFields = {
  label: Flags.optional(
    Flags.text("label", MemoryRecord.Label, "A name for the thing learned (one line, at most 64 characters).")
  ),
  tags: Flags.repeated(Flags.text("tag", MemoryRecord.Tag, "A tag; repeat the flag for several.", "tag")),
  source: Flags.optional(
    Flags.choice(
      "source",
      sourceTypes,
      "Who wrote the memory. Sets the trust tier; anything but operator starts pending review. Default: unknown."
    )
  ),
  scope: Flags.optional(
    Flags.text(
      "scope",
      Flags.Scope,
      "Where the memory applies: global, project:<id> or session:<id>. Default: global.",
      "scope"
    )
  ),
  delivery: Flags.optional(
    Flags.choice("delivery", deliveryPolicies, "When the memory may enter a prompt. Default: retrieved.", "policy")
  ),
  epoch: Flags.optional(
    Flags.text("epoch", Epoch, "A free-form era marker (one line), for bulk lifecycle changes later.")
  ),
  expiresInDays: Flags.optional(
    Flags.text("expires-in-days", ExpiresInDays, "Expire the memory this many days after creation.", "days")
  ),
  id: Flags.optional(
    Flags.text("id", MemoryRecord.MemoryId, "Use this id instead of a generated one.", "id")
  )
}

const contentArg = Flags.argument(Flags.text("content", MemoryRecord.Content, "What was learned, in prose."))
const idFlag = (name: string, description: string) => Flags.text(name, MemoryRecord.MemoryId, description)
const idArg = (name: string, description: string) => Flags.argument(idFlag(name, description))

const filterOptions = {
  scopes: Flags.repeated(
    Flags.text(
      "scope",
      Flags.Scope,
      "Only this scope (global, project:<id> or session:<id>); repeat for several.",
      "scope"
    )
  ),
  kinds: Flags.repeated(Flags.choice("kind", kinds, "Only this kind; repeat for several.")),
  deliveryPolicies: Flags.repeated(
    Flags.choice("delivery", deliveryPolicies, "Only this delivery policy; repeat for several.", "policy")
  ),
  reviewStates: Flags.repeated(
    Flags.choice("review", reviewStates, "Only this review state; repeat for several.", "state")
  ),
  deliverable: Flags.boolean(
    "deliverable",
    "Only memories that may reach a prompt: not rejected, expired or superseded."
  ),
  includeSuperseded: Flags.boolean("include-superseded", "Also show superseded (invalidated) memories.")
}

type OptionValues<T> = { readonly [K in keyof T]: T[K] extends Options.Options<infer A> ? A : never }
type FilterFlags = OptionValues<typeof filterOptions>

const limitOption = (what: string) => Flags.optional(Flags.text("limit", Limit, `How many ${what} at most.`, "n"))

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const decodeWriteInput = (raw: Record<string, unknown>) =>
  Effect.mapError(
    Schema.decodeUnknown(MemoryRecord.MemoryWriteInput)(raw, { onExcessProperty: "error" }),
    (error) => new CliFailure({ problem: MemoryWrite.describeParseError(error), exitCode: ExitCode.refused })
  )

const writeInputOf = (
  content: string,
  kind: MemoryRecord.MemoryKind,
  fields: OptionValues<typeof writeFields>
) =>
  decodeWriteInput({
    content,
    kind,
    ...Flags.defined({
      id: fields.id,
      label: fields.label,
      tags: fields.tags,
      sourceType: fields.source,
      scope: fields.scope,
      deliveryPolicy: fields.delivery,
      epoch: fields.epoch,
      expiresInDays: fields.expiresInDays
    })
  })

const filtersOf = (flags: FilterFlags): MemoryQuery.MemoryFilters =>
  Flags.defined({
    scopes: flags.scopes,
    kinds: flags.kinds,
    deliveryPolicies: flags.deliveryPolicies,
    reviewStates: flags.reviewStates,
    deliverable: flags.deliverable ? true : undefined,
    includeSuperseded: flags.includeSuperseded ? true : undefined
  })

/** Prints the JSON document or the human text (stored escape sequences shown, never run), as `--json` asks. */
const output = (document: () => unknown, human: () => string) =>
  Effect.flatMap(
    Root.settings,
    (settings) => Console.log(settings.json ? Render.json(document()) : Render.escapeControls(human()))
  )

const store = MemoryStore.MemoryStore

/**
 * The shortest id prefix `resolveId` expands.
 *
 * @since 0.1.0
 * @category constants
 */
export const MIN_ID_PREFIX = 4

/**
 * The memory id an argument names: the id itself when a memory has it, else the one id that
 * starts with it (at least {@link MIN_ID_PREFIX} characters; superseded, expired and rejected
 * memories count). Several ids starting with it is a refusal listing some of them; none leaves
 * the argument as it was, for the store to report as not found.
 *
 * @since 0.1.0
 * @category ids
 */
export const resolveId = (id: MemoryRecord.MemoryId) =>
  Effect.gen(function*() {
    const memories = yield* store
    if ((yield* memories.get([id])).records.length > 0 || id.length < MIN_ID_PREFIX) return id
    const matches: Array<MemoryRecord.MemoryId> = []
    let cursor: string | undefined
    do {
      const page = yield* memories.list({
        includeSuperseded: true,
        limit: MemoryQuery.MAX_LIMIT,
        ...(cursor === undefined ? {} : { cursor })
      })
      for (const record of page.records) if (record.id.startsWith(id)) matches.push(record.id)
      cursor = matches.length > 1 ? undefined : page.nextCursor
    } while (cursor !== undefined)
    if (matches.length > 1) {
      matches.sort()
      return yield* new CliFailure({
        problem: `"${id}" starts several memory ids (${matches.slice(0, 3).join(", ")}${
          matches.length > 3 ? ", …" : ""
        }); give more of the id`,
        exitCode: ExitCode.refused
      })
    }
    return matches[0] ?? id
  })

// ---------------------------------------------------------------------------------------------
// Subcommands
// ---------------------------------------------------------------------------------------------

/**
 * `engram memory add <content> --kind <kind> [--label] [--tag]… [--source] [--scope] [--delivery]
 * [--epoch] [--expires-in-days] [--id]`
 *
 * @since 0.1.0
 * @category commands
 */
export const add = Command.make(
  "add",
  { content: contentArg, kind: Flags.required(kindFlag), ...writeFields },
  ({ content, kind, ...fields }) =>
    Effect.gen(function*() {
      const input = yield* writeInputOf(content, kind, fields)
      const [record] = yield* StoreBackend.provide(Effect.flatMap(store, (s) => s.write([input])))
      const now = yield* DateTime.now
      yield* output(
        () => ({ record: Render.jsonRecord(record!) }),
        () => `added ${record!.id}\n${Render.recordDetail(record!, now)}`
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("Write a new memory (create-only: an existing id is refused)."))

/**
 * `engram memory list [filters] [--limit n] [--cursor c]`
 *
 * @since 0.1.0
 * @category commands
 */
export const list = Command.make(
  "list",
  {
    ...filterOptions,
    limit: limitOption("memories per page"),
    cursor: Flags.optional(
      Flags.text("cursor", Schema.String, "Continue after the page that printed this cursor.", "cursor")
    )
  },
  ({ limit, cursor, ...flags }) =>
    Effect.gen(function*() {
      const query: MemoryQuery.ListQuery = { ...filtersOf(flags), ...Flags.defined({ limit, cursor }) }
      const page = yield* StoreBackend.provide(Effect.flatMap(store, (s) => s.list(query)), "read")
      const now = yield* DateTime.now
      yield* output(
        () => ({
          records: page.records.map(Render.jsonRecord),
          skipped: page.skipped,
          nextCursor: page.nextCursor ?? null
        }),
        () => Render.listPage(page, now)
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("List memories, newest first, one page at a time."))

/**
 * `engram memory search <text> [filters] [--limit n]`
 *
 * @since 0.1.0
 * @category commands
 */
export const search = Command.make(
  "search",
  {
    text: Flags.argument(
      Flags.text(
        "text",
        Schema.String,
        "Words to look for; a memory matches when it shares a whole word with them (with --embedder, also when " +
          "its vector is near theirs)."
      )
    ),
    ...filterOptions,
    limit: limitOption("hits"),
    ...Embedder.recallOptions
  },
  ({ embedder, embedderDimensions, embedderModel, limit, text, ...flags }) =>
    Effect.gen(function*() {
      const options: MemoryQuery.SearchOptions = { ...filtersOf(flags), ...Flags.defined({ limit }) }
      const where = yield* StoreBackend.location
      const result = yield* Effect.provide(
        Effect.flatMap(store, (s) => s.search(text, options)),
        StoreBackend.layer(where, "read", Embedder.layer({ embedder, embedderModel, embedderDimensions }))
      )
      const now = yield* DateTime.now
      yield* output(
        () => ({
          hits: result.hits.map((hit) => ({ record: Render.jsonRecord(hit.record), score: hit.score })),
          skipped: result.skipped
        }),
        () => Render.searchResult(result, now)
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription(
  "Search memories by keyword (label, content and tags); with --embedder test|local|openai, hybrid with the vectors " +
    "engram embed stored."
))

/**
 * `engram memory review <id> <confirmed|pending|rejected>`
 *
 * @since 0.1.0
 * @category commands
 */
export const review = Command.make(
  "review",
  {
    id: idArg("id", "The memory to review."),
    state: Flags.argument(Flags.choice("state", reviewStates, "The new review state."))
  },
  ({ id, state }) =>
    Effect.gen(function*() {
      // The one review path (Extraction.review): confirming a supersede proposal carries it out.
      const { review: reviewMemory } = yield* Effect.promise(() => import("@engram/runtime/Extraction"))
      const where = yield* StoreBackend.location
      const { full, record } = yield* Effect.provide(
        Effect.flatMap(
          resolveId(id),
          (full) => Effect.map(reviewMemory(full, state), (record) => ({ full, record }))
        ),
        StoreBackend.layer(where)
      )
      yield* output(
        () => ({ record: Render.jsonRecord(record), ...(record.id !== full ? { approvedProposal: full } : {}) }),
        () =>
          record.id === full
            ? `${record.id} is now ${record.reviewState}`
            : `approved proposal ${full}: ${record.id} supersedes ${
              record.supersedes ?? "the memory it corrects"
            } and is ${record.reviewState}`
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription(
    "Confirm, reject or reset the review state of a memory. Confirming a supersede proposal carries it out."
  )
)

/**
 * `engram memory supersede <old-id> <content> [--kind] [write fields]` — kind, label, tags, source
 * (so its trust tier and review state) and delivery policy default to the original's; the scope always stays the original's unless given.
 *
 * @since 0.1.0
 * @category commands
 */
export const supersede = Command.make(
  "supersede",
  {
    oldId: idArg("old-id", "The memory the new one replaces."),
    content: contentArg,
    kind: Flags.optional(kindFlag),
    ...writeFields
  },
  ({ oldId, content, kind, ...fields }) =>
    Effect.gen(function*() {
      // Check the command line before the store is opened (the kind is re-checked below).
      yield* writeInputOf(content, kind ?? "note", fields)
      const location = yield* StoreBackend.location
      const outcome = yield* Effect.provide(
        Effect.gen(function*() {
          const memories = yield* store
          const fullId = yield* resolveId(oldId)
          const { records } = yield* memories.get([fullId])
          const original = records[0]
          const input = yield* writeInputOf(content, kind ?? original?.kind ?? "note", {
            ...fields,
            label: fields.label ?? original?.label,
            tags: fields.tags ?? (original !== undefined && original.tags.length > 0 ? original.tags : undefined),
            delivery: fields.delivery ?? original?.deliveryPolicy,
            // An operator's correction of an operator's memory stays an operator's.
            source: fields.source ?? original?.sourceType
          })
          return yield* memories.supersede(fullId, input)
        }),
        StoreBackend.layer(location, "write")
      )
      const now = yield* DateTime.now
      yield* output(
        () => ({
          superseded: Render.jsonRecord(outcome.superseded),
          successor: Render.jsonRecord(outcome.successor)
        }),
        () =>
          `superseded ${outcome.superseded.id} by ${outcome.successor.id}\n${
            Render.recordDetail(outcome.successor, now)
          }${
            outcome.successor.reviewState === "pending"
              ? `\nthe replacement waits for review: guarded sections compose it only once confirmed ` +
                `(${StoreBackend.commandFor(location)} memory review ${outcome.successor.id} confirmed)`
              : ""
          }`
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("Replace a memory with a newer one; the old one stays readable, invalidated."))

/**
 * `engram memory show <id>`: one memory in full — its fields, review state, trust tier, the
 * poisoning screen's flag, and for an extracted memory the session and turns it came from.
 *
 * @since 0.1.0
 * @category commands
 */
export const show = Command.make(
  "show",
  { id: idArg("id", "The memory to show (an unambiguous start of its id is enough).") },
  ({ id }) =>
    Effect.gen(function*() {
      const record = yield* StoreBackend.provide(
        Effect.gen(function*() {
          const full = yield* resolveId(id)
          const [found] = (yield* (yield* store).get([full])).records
          if (found === undefined) {
            return yield* new CliFailure({ problem: `there is no memory ${id}`, exitCode: ExitCode.refused })
          }
          return found
        }),
        "read"
      )
      const now = yield* DateTime.now
      yield* output(() => ({ record: Render.jsonRecord(record) }), () => Render.recordDetail(record, now))
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("Show one memory in full: review state, trust tier, flag and where it came from."))

/**
 * `engram memory expire <id>`
 *
 * @since 0.1.0
 * @category commands
 */
export const expire = Command.make(
  "expire",
  { id: idArg("id", "The memory to expire.") },
  ({ id }) =>
    Effect.gen(function*() {
      const record = yield* StoreBackend.provide(
        Effect.flatMap(resolveId(id), (full) => Effect.flatMap(store, (s) => s.expire(full)))
      )
      yield* output(
        () => ({ record: Render.jsonRecord(record) }),
        () =>
          record.expiresAt === undefined
            ? `${record.id} expired`
            : `${record.id} expired at ${DateTime.formatIso(record.expiresAt)}`
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("Expire a memory now: it stays stored but is no longer delivered."))

/**
 * `engram memory forget <id>… | --scope <scope> [--by <name>]`: hard deletion. The records, their
 * search-index entries and their promotion rows go, in one transaction; a tombstone per record
 * keeps who forgot which id and when, never the content.
 *
 * @since 0.1.0
 * @category commands
 */
export const forget = Command.make(
  "forget",
  {
    ids: Flags.repeatedArgument(idFlag("id", "A memory to forget; give several to forget them together.")),
    scope: Flags.optional(
      Flags.text("scope", Flags.Scope, "Forget every memory of this scope instead of naming ids.", "scope")
    ),
    by: Flags.optional(
      Flags.text("by", MemoryForget.ForgottenBy, "Who is forgetting, for the tombstone. Default: cli.", "name")
    )
  },
  ({ by, ids, scope }) =>
    Effect.gen(function*() {
      if ((ids.length === 0) === (scope === undefined)) {
        return yield* new CliFailure({
          problem: "name the memories to forget: one or more ids, or --scope <scope> (not both)",
          exitCode: ExitCode.refused
        })
      }
      const location = yield* StoreBackend.location
      // Every store of the database: forget takes promotion rows and prompt-telemetry text with it.
      const result = yield* Effect.gen(function*() {
        const target: MemoryForget.ForgetTarget = scope === undefined
          ? { ids: yield* Effect.forEach(ids, resolveId) }
          : { scope }
        return yield* Effect.flatMap(store, (s) => s.forget(target, { by: by ?? "cli" }))
      }).pipe(
        Effect.provide(StoreBackend.layerObserved(location))
      )
      const forgotten = result.tombstones.map((t) => t.memoryId)
      yield* output(
        () => ({ tombstones: result.tombstones.map((t) => Schema.encodeSync(MemoryForget.Tombstone)(t)) }),
        () => forgotten.length === 0 ? "nothing to forget: no such memory" : `forgot ${forgotten.join(", ")}`
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription(
    "Delete memories for good (record, search index, promotion rows); a tombstone records who and when."
  )
)

/**
 * `engram memory import <legacy.db>`: imports a v1 knowledge store's `chunks` table, once.
 *
 * @since 0.1.0
 * @category commands
 */
export const importLegacy = Command.make(
  "import",
  {
    file: Flags.argument(Flags.make(
      "legacy.db",
      (path) =>
        NodeFs.existsSync(path) ? Effect.succeed(path) : Effect.fail(`${path} must exist: there is no such file`),
      "The v1 knowledge database (an SQLite file with a chunks table)."
    ))
  },
  ({ file }) =>
    Effect.gen(function*() {
      const LegacyImport = yield* Effect.promise(() => import("@engram/store-sqlite/LegacyImport"))
      const report = yield* StoreBackend.provide(LegacyImport.importLegacyChunks(file))
      yield* output(() => report, () => Render.importReport(report, LegacyImport.describeReport(report)))
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("Import a legacy v1 knowledge store; importing the same data again changes nothing."))

/**
 * The group's subcommands, in the order help lists them.
 *
 * @since 0.1.0
 * @category commands
 */
export const subcommands = [add, list, search, show, review, supersede, expire, forget, importLegacy] as const

/**
 * `engram memory …`: the memory command group.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("memory").pipe(
  Command.withDescription("Write, read and review the memory store."),
  Command.withSubcommands(subcommands)
)
