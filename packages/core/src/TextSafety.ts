/**
 * The one sanitiser for text that reaches a model or a terminal. Every renderer — Background
 * entries and headings in the stable prefix, the projection's envelope lines and labels, the CLI's
 * output — goes through these functions, so the rules cannot drift apart.
 *
 * Characters a reader cannot see or that change how the rest of the text reads are *unsafe*:
 * C0 and C1 controls (U+001E included, a record separator many readers treat as a line break),
 * DEL, the line and paragraph separators, bidi controls (U+061C, U+200E/F, U+202A–U+202E,
 * U+2066–U+2069), zero-width characters (U+200B–U+200D, U+2060, U+FEFF, U+180E) and Unicode tag
 * characters (U+E0000–U+E007F, which can spell hidden ASCII). For a model they are removed (line
 * breaks and other controls become a space on one line); for a terminal they are shown as visible `\u{…}` escapes.
 * Look-alikes of the projection's own tags (`</injected_memory>`, …) lose their `<`, in the prefix
 * as in the envelope, so no stored text can forge a marker.
 *
 * @since 0.1.0
 */
import { neutralize } from "./internal/reservedTags.js"

// Controls: every C0 and C1 control but tab, DEL, and the line and paragraph separators.
const control = /[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u2028\u2029]/u
// Invisible characters that reorder or hide text: bidi controls, zero-width characters, tag characters.
const invisible = /[\u061C\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/gu
const controlRun =
  /\s*[\u0000-\u0008\u000A-\u001F\u007F-\u009F\u2028\u2029][\s\u0000-\u0008\u000A-\u001F\u007F-\u009F\u2028\u2029]*/gu
const blockControl = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/gu
const unsafeForTerminal =
  /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u180E\u200B-\u200F\u2028\u2029\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]/gu

/**
 * True when the text holds an unsafe character (see the module description).
 *
 * @since 0.1.0
 * @category predicates
 */
export const hasUnsafe = (text: string): boolean => control.test(text) || text.replace(invisible, "") !== text

/**
 * Text for one line of a prompt: invisible characters removed, every run of whitespace holding a
 * control character (line breaks included) collapsed to one space, look-alikes of the
 * projection's tags defused. Used for every Background key, value and heading, every envelope
 * line and every label.
 *
 * @since 0.1.0
 * @category rendering
 */
export const safeLine = (text: string): string => {
  const visible = text.replace(invisible, "")
  // Collapsing runs costs a backtracking scan at every space; most text has no control to collapse.
  return neutralize(control.test(visible) ? visible.replace(controlRun, " ") : visible)
}

/**
 * Text for a multi-line block of a prompt (working state): unsafe characters removed, line breaks
 * and tabs kept, look-alikes of the projection's tags defused.
 *
 * @since 0.1.0
 * @category rendering
 */
export const safeBlock = (text: string): string =>
  neutralize(text.replace(invisible, "").replace(/\r\n?|[\u0085\u2028\u2029]/g, "\n").replace(blockControl, " "))

/**
 * Text for a terminal: every unsafe character — escape sequences' ESC included — shown as a
 * visible `\u{…}` escape, so stored text can neither move the cursor, recolour the screen nor
 * reorder what is printed. Line feeds and tabs are kept.
 *
 * @since 0.1.0
 * @category rendering
 */
export const escapeForTerminal = (text: string): string =>
  text.replace(unsafeForTerminal, (ch) => `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase()}}`)
