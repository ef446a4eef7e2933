/**
 * The poisoning screen's rules (`InstructionScreen`): the patterns each reason is flagged by, the
 * words a match of each pattern must hold, and the folding the patterns read text through.
 *
 * @internal
 */
import type { ScreenReason } from "../InstructionScreen.js"
import { safeLine } from "../TextSafety.js"
import { neutralize } from "./reservedTags.js"

/**
 * One pattern of a rule, with the words any match of it must contain: each inner list names
 * alternatives, and a match holds at least one word of every list, as a whole word (a maximal run
 * of `\w` characters, which is what the pattern's `\b`, `\s` and punctuation around them
 * require). Text missing a list's every word cannot match, so the pattern is not run on it: most
 * text holds none of the words the patterns start from, and a screen then costs one split into
 * words instead of fifteen backtracking scans. The lists only decide what is skipped; the pattern
 * keeps the last word (`InstructionScreen.test.ts` checks every list against its pattern).
 *
 * The first list is the pattern's gate: of its lists, the one whose words ordinary text holds
 * least (`ignore` rather than `instructions`, `now` rather than `you`). Text holding no gate word
 * of any pattern is passed on one scan for the gates alone (see {@link plainlyUnmatched}).
 */
export interface Pattern {
  readonly pattern: RegExp
  readonly words: ReadonlyArray<ReadonlyArray<string>>
}

const plural = (...words: ReadonlyArray<string>): ReadonlyArray<string> => words.flatMap((w) => [w, `${w}s`])

export const rules: ReadonlyArray<readonly [ScreenReason, ReadonlyArray<Pattern>]> = [
  [
    "override-rules",
    [
      {
        pattern:
          /\b(ignore|disregard|forget|override|bypass|skip)\b[^.!?]{0,40}\b(previous|prior|above|earlier|all|any|your|the|system|safety|these)\b[^.!?]{0,30}\b(instructions?|rules?|prompts?|guidelines?|directions?|policies|policy|constraints?|restrictions?)\b/,
        words: [
          ["ignore", "disregard", "forget", "override", "bypass", "skip"],
          [
            ...plural("instruction", "rule", "prompt", "guideline", "direction", "constraint", "restriction"),
            "policies",
            "policy"
          ]
        ]
      },
      {
        pattern: /\b(new|updated|real|true)\s+(system\s+)?(instructions?|rules)\s*[:：]/,
        words: [["instruction", "instructions", "rules"], ["new", "updated", "real", "true"]]
      },
      {
        pattern: /\b(system|developer)\s+(prompt|message|instructions?)\s*[:：]/,
        words: [["system", "developer"], ["prompt", "message", "instruction", "instructions"]]
      },
      { pattern: /(^|\n)\s*(system|assistant|developer)\s*[:：]/, words: [["system", "assistant", "developer"]] },
      {
        pattern: /<\|?\s*(im_start|im_end|system|endoftext)\s*\|?>/,
        words: [["im_start", "im_end", "system", "endoftext"]]
      },
      { pattern: /\bjailbreak\b|\bdeveloper mode\b/, words: [["jailbreak", "developer"]] }
    ]
  ],
  [
    "reveal-secrets",
    [
      {
        pattern:
          /\b(reveal|print|show|output|leak|disclose|expose|send|repeat|dump|email|post)\b[^.!?]{0,40}\b(system prompt|hidden (prompt|instructions?)|secrets?|api[\s_-]?keys?|passwords?|credentials?|access tokens?|private keys?|env(ironment)? variables?)\b/,
        words: [[
          "reveal",
          "print",
          "show",
          "output",
          "leak",
          "disclose",
          "expose",
          "send",
          "repeat",
          "dump",
          "email",
          "post"
        ]]
      }
    ]
  ],
  [
    "call-tools",
    [
      {
        pattern: /\b(call|invoke|execute|trigger|run)\b[^.!?]{0,30}\b(the\s+)?(tool|function call|memory_\w+)\b/,
        words: [["call", "invoke", "execute", "trigger", "run"]]
      },
      { pattern: /\bmemory_(save|recall)\b/, words: [["memory_save", "memory_recall"]] },
      {
        pattern: /\byou (must|should|will|shall) (call|invoke|execute|run|use) /,
        words: [["must", "should", "will", "shall"], ["you"], ["call", "invoke", "execute", "run", "use"]]
      }
    ]
  ],
  [
    "change-identity",
    [
      { pattern: /\byou are (now|no longer)\b/, words: [["now", "no"], ["you"], ["are"]] },
      {
        pattern: /\b(from now on|henceforth|starting now|from this point on),?\s+you\b/,
        words: [["now", "henceforth", "point"], ["you"]]
      },
      {
        pattern:
          /\b(pretend|act|behave|roleplay)\s+(to be|as if|as)\s+(you|an?|the)\b[^.!?]{0,30}\b(ai|assistant|model|agent|bot|unrestricted|unfiltered|dan)\b/,
        words: [["pretend", "act", "behave", "roleplay"]]
      },
      {
        pattern: /\byour (new )?(name|identity|persona|role) is (now\b|no longer\b)/,
        words: [["name", "identity", "persona", "role"], ["your"], ["is"], ["now", "no"]]
      },
      {
        pattern: /\b(forget|abandon|drop) (who|what) you are\b/,
        words: [["forget", "abandon", "drop"], ["who", "what"], ["you"], ["are"]]
      }
    ]
  ]
]

const fold = (text: string): string => safeLine(text.normalize("NFKC")).toLowerCase().replace(/[\u2018\u2019]/g, "'")

const lineBreaks = /\r\n?|\n|\u2028|\u2029/

/** {@link folded} the long way, for any text. */
export const foldedSlowly = (text: string): string => text.normalize("NFKC").split(lineBreaks).map(fold).join("\n")

// Tab, line breaks and the printable ASCII characters: text folding leaves their words as they are.
const plainAscii = /^[\t\n\r\x20-\x7e]*$/

/**
 * The text as the patterns read it: folded line by line, line breaks kept apart from the rest.
 * For text of tabs, line breaks and printable ASCII, folding a line is defusing its tags and
 * lowercasing it (NFKC, the quote folding and the invisible characters leave it as it is, and a
 * line holds no other control); other text takes {@link foldedSlowly}.
 */
export const folded = (text: string): string =>
  plainAscii.test(text)
    ? text.split(lineBreaks).map((line) => neutralize(line).toLowerCase()).join("\n")
    : foldedSlowly(text)

// Every word some pattern needs, so the words of a text are collected only when they matter.
const needed: ReadonlyArray<string> = [
  ...new Set(rules.flatMap(([, patterns]) => patterns.flatMap((p) => p.words.flat())))
]
// The needed words as one whole-word alternation: it finds a maximal run of `\w` that is a needed
// word (`\b` on both sides; without the `u` flag `\w` and `\b` are ASCII, like `\w+`), and
// skips every other word without building a string of it — the words of a text, split and looked
// up one by one, cost the write path more than the rest of the screen (issue #25). The words are
// runs of `\w` (letters, digits, `_`), so they need no escaping.
const neededPattern = new RegExp(`\\b(?:${needed.join("|")})\\b`, "g")
const emptySet: ReadonlySet<string> = new Set()

/** The words of `lines` (maximal runs of `\w`) that some pattern needs. */
export const neededWords = (lines: string): ReadonlySet<string> => {
  const found = lines.match(neededPattern)
  return found === null ? emptySet : new Set(found)
}

// Each needed word's patterns (those naming it in a list), and whether a pattern has no lists at
// all (it may match any text, so no text is plainly unmatched).
const patternsNaming: ReadonlyMap<string, ReadonlyArray<Pattern>> = new Map(
  needed.map((word) => [
    word,
    rules.flatMap(([, patterns]) => patterns.filter((p) => p.words.some((any) => any.includes(word))))
  ])
)
const unconditional = rules.some(([, patterns]) => patterns.some((p) => p.words.length === 0))

// Every pattern's gate (its first list) as one whole-word alternation, case-insensitive: it reads
// ASCII text only, where `i` and lowercasing find the same words. A third of the needed words,
// and none of the commonest (`you`, `is`, `what`): conversational text mostly holds none of them,
// and a write is then screened on this one scan, with no lowercased copy and no set of words
// (issue #25: the screen was two fifths of preparing a batched write).
const gatePattern = new RegExp(
  `\\b(?:${[...new Set(rules.flatMap(([, patterns]) => patterns.flatMap((p) => p.words[0] ?? [])))].join("|")})\\b`,
  "i"
)

/** False when `present` lacks every word of one of the pattern's lists: the pattern cannot match. */
export const mayMatch = (pattern: Pattern, present: ReadonlySet<string>): boolean =>
  pattern.words.every((any) => any.some((word) => present.has(word)))

/**
 * True when no pattern can match `text`, told from its words alone, without folding it — for
 * text of tabs, line breaks and printable ASCII, where folding changes no word: NFKC and the
 * quote folding leave ASCII as it is, there is nothing invisible or controlling to remove but
 * line breaks (words end there anyway), and a defused tag gains `&lt;`, whose `lt` no pattern
 * needs. False means: fold and run the patterns (`InstructionScreen.test.ts` holds the two ways
 * to one verdict).
 */
export const plainlyUnmatched = (text: string): boolean => {
  if (!plainAscii.test(text) || unconditional) return false
  // No pattern's gate is present: no pattern can find all its lists.
  if (!gatePattern.test(text)) return true
  const present = neededWords(text.toLowerCase())
  // Only a pattern that names a present word can find each of its lists present.
  for (const word of present) {
    for (const pattern of patternsNaming.get(word) ?? []) if (mayMatch(pattern, present)) return false
  }
  return true
}
