/**
 * The errors of `NativeRuntime`: building an agent, starting, resuming and running a turn. Both
 * the public module (which re-exports them) and its body import them from here.
 *
 * @since 0.1.0
 */
import { ErrorClass } from "@engram/core"
import * as Schema from "effect/Schema"

/**
 * Two tools of an agent share a name (or a user tool takes a memory tool's name): the model could
 * not tell them apart. Rename one.
 *
 * @since 0.1.0
 * @category errors
 */
export class ToolNameClash extends ErrorClass.TaggedError<ToolNameClash>()("ToolNameClash", {
  name: Schema.String
}, {
  errorClass: "Misconfigured",
  message: (self) =>
    `two tools of the agent are named ${self.name}: tool names must be unique ` +
    `(memory_save and memory_recall are the memory toolkit's); rename one`
}) {}

/**
 * A new turn was started on a session that is waiting for an approval. Resume (or deny) first.
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionAwaitingApproval
  extends ErrorClass.TaggedError<SessionAwaitingApproval>()("SessionAwaitingApproval", {
    sessionId: Schema.String,
    turn: Schema.Number,
    tools: Schema.Array(Schema.String)
  }, {
    errorClass: "Conflict",
    message: (self) =>
      `session ${self.sessionId} is waiting for approval of ${self.tools.join(", ")} (turn ${self.turn}); ` +
      `resume it with a decision before starting a new turn`
  })
{}

/**
 * `resume` found nothing to resume: no pending interrupt, or a stored session that does not end
 * with the suspended calls.
 *
 * @since 0.1.0
 * @category errors
 */
export class NothingToResume extends ErrorClass.TaggedError<NothingToResume>()("NothingToResume", {
  sessionId: Schema.String,
  problem: Schema.String
}, {
  errorClass: "Conflict",
  message: (self) => `cannot resume session ${self.sessionId}: ${self.problem}`
}) {}

/**
 * The model kept calling tools past the turn's limit of model calls. What it said and did so
 * far is stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class CallLimitReached extends ErrorClass.TaggedError<CallLimitReached>()("CallLimitReached", {
  sessionId: Schema.String,
  turn: Schema.Number,
  calls: Schema.Number
}, {
  errorClass: "Unavailable",
  message: (self) =>
    `turn ${self.turn} of session ${self.sessionId} stopped after ${self.calls} model calls: ` +
    `the model was still calling tools (raise maxCalls if this is expected)`
}) {}

/**
 * The turn's input was refused before anything ran (an invalid session id).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidTurn extends ErrorClass.TaggedError<InvalidTurn>()("InvalidTurn", {
  problem: Schema.String
}, {
  errorClass: "InvalidInput",
  message: (self) => `the turn was refused: ${self.problem}`
}) {}
