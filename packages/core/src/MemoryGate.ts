/**
 * The one gate between stored memory and a model: every producer of model-visible text that
 * carries a record — the projection's tiers (the prior-session digest included), the stable
 * prefix's overlay, every memory tool's result on every transport, the save gate's conflict and
 * duplicate replies, the extraction prompt's known memories, MCP's resources and instructions —
 * passes the record through {@link admit} (or asks {@link isHeld}) and shows only what it answers.
 *
 * It applies the review policy and the sanitiser together:
 *
 * - a record the poisoning screen flags (`InstructionScreen`: its content, label or a tag) and no
 *   operator confirmed is **held**: no path shows its content or tags; a tool result may name it —
 *   id, kind, its label when the label itself passes the screen, and "held for review" — so the
 *   model knows a record exists without reading it;
 * - a rejected record, and (unless the caller asked for history) a superseded or expired one, is
 *   **withheld**: nothing of it is shown as memory;
 * - everything else is **shown**, its content and label made safe by `TextSafety` (invisible and
 *   control characters removed, the projection's tags defused), marked `unconfirmed` while pending.
 *
 * The screen's verdict is remembered per text (in a bounded cache): a store's records come back
 * turn after turn, and the screen is a pure function of the text. What each path shows of a
 * pending record that is not flagged is decision 0130's.
 *
 * @since 0.1.0
 */
import type * as DateTime from "effect/DateTime"
import * as internal from "./internal/memoryGate.js"
import type { MemoryRecord } from "./MemoryRecord.js"

/**
 * The words a tool result uses for a held record.
 *
 * @since 0.1.0
 * @category constants
 */
export const HELD_FOR_REVIEW = "held for review" as const

/**
 * A record a path may show: its content and label made safe (`line`: on one line; `block`: line
 * breaks kept), and whether it is still unconfirmed.
 *
 * @since 0.1.0
 * @category models
 */
export interface Shown {
  readonly _tag: "Shown"
  readonly record: MemoryRecord
  readonly content: string
  readonly label: string | undefined
  readonly unconfirmed: boolean
}

/**
 * A record the screen flags and no operator confirmed: a path may name it (id, kind, and its label
 * when the label passes the screen, made safe), never show its content.
 *
 * @since 0.1.0
 * @category models
 */
export interface Held {
  readonly _tag: "Held"
  readonly record: MemoryRecord
  readonly label: string | undefined
}

/**
 * A record no path shows as memory: rejected, or superseded or expired where history was not asked for.
 *
 * @since 0.1.0
 * @category models
 */
export interface Withheld {
  readonly _tag: "Withheld"
  readonly record: MemoryRecord
  readonly reason: "rejected" | "superseded" | "expired"
}

/**
 * What the gate lets a path show of one record.
 *
 * @since 0.1.0
 * @category models
 */
export type Admission = Shown | Held | Withheld

/**
 * How a path asks:
 *
 * - `now`: when the record is read (an expiry at or before it withholds the record); without it,
 *   no record counts as expired.
 * - `form`: `line` (default) puts the content on one line, as every prompt line and tool message
 *   shows it; `block` keeps its line breaks (a tool result's structured field).
 * - `purpose`: `deliver` (default) withholds superseded and expired records; `history` — a tool
 *   call that asked for the history of a memory — shows them (a rejected record is withheld either way).
 *
 * @since 0.1.0
 * @category models
 */
export interface AdmitOptions {
  readonly now?: DateTime.Utc | undefined
  readonly form?: "line" | "block" | undefined
  readonly purpose?: "deliver" | "history" | undefined
}

/**
 * What a path may show of `record` (see the module description).
 *
 * @since 0.1.0
 * @category gate
 */
export const admit: (record: MemoryRecord, options?: AdmitOptions) => Admission = internal.admit

/**
 * True when `record` is held: the screen flags its content, label or one of its tags (or the
 * second screen marked it, `InstructionScreen.MODEL_FLAG_TAG`) and no operator confirmed it.
 * The verdict is remembered per text, so asking again costs one look-up.
 *
 * @since 0.1.0
 * @category gate
 */
export const isHeld: (record: Pick<MemoryRecord, "content" | "label" | "reviewState" | "tags">) => boolean =
  internal.isHeld

/**
 * True when the screen flags `text`, remembered per text: what {@link isHeld} asks of a record's
 * content and label.
 *
 * @since 0.1.0
 * @category gate
 */
export const flaggedText: (text: string) => boolean = internal.flaggedText
