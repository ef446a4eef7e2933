/**
 * The poisoning screen's fast path (`InstructionScreen`): one scan of a folded ASCII text for the
 * words and marks that every rule needs at least one of — a verb of disregarding, a secret, a
 * harmful act, a persona without limits, an AI named, a tool, a destination, a role marker, the
 * commonest words of ROT13 or reversed English… Text holding none of them cannot be flagged, so it
 * is passed without being split into words: most memories are such text (issue #37).
 *
 * The anchors are built from the vocabulary (`screenLexicon`), so a word added there is an anchor
 * at once; `InstructionScreen.test.ts` holds the fast path to the full screen's verdict.
 *
 * @internal
 */
import { C, entries, STANDING_WORDS } from "./screenLexicon.js"

/** Concepts rare enough that one of their words sends a text the long way. */
const STRONG = C.SECRET | C.COVERT | C.UNBOUND | C.NOW_YOU | C.AI | C.DECODE

/**
 * Concepts common in ordinary text ("don't forget", "pay attention", "even if"): one of their
 * words counts only when the text also holds a word of the companion concepts the rule that reads
 * it needs — a verb of disregarding needs a word for rules or for what came before; a harmful act
 * or a password needs a condition, a modal, an AI or a verb of showing or sending; a tool needs a
 * verb of calling.
 */
const CONDITIONAL: ReadonlyArray<readonly [number, number]> = [
  [C.IGNORE, C.RULES | C.PRIOR],
  [C.HARM, C.TRIGGER | C.MODAL | C.AI],
  [C.SCAM, C.TRIGGER | C.AI],
  [C.WEAK_SECRET, C.REVEAL | C.SEND | C.TRIGGER | C.MODAL | C.AI | C.ASK | C.TELL],
  [C.TOOL, C.CALL],
  // The agent's own rules shown, declared void, or outranked.
  [C.RULES, C.REVEAL | C.YOU],
  // Secrecy in any language ("mai … dire all'utente", "nicht … sagen"): a negation beside a verb of telling.
  [C.NEG, C.REVEAL | C.TELL]
]

/** Words the rules read outside the concepts above, each with the words it needs beside it (none: strong). */
const extraAnchors: ReadonlyArray<readonly [ReadonlyArray<string>, ReadonlyArray<string>]> = [
  // A protection switched off, a dose raised, a payment diverted, a destruction without asking.
  [
    ["antivirus", "firewall", "2fa", "mfa", "two~factor", "authentication", "defender", "encryption", "passcode"],
    ["disable", "deactivate", "uninstall", "turn", "switch", "bypass", "remove", "skip", "stop"]
  ],
  [
    ["dose", "doses", "dosage", "dosages", "prescribed", "prescription", "medication", "insulin", "pills"],
    ["double", "triple", "exceed", "overdose", "increase", "quadruple"]
  ],
  [
    ["recipient", "payee", "beneficiary", "iban", "wallet", "routing"],
    ["change", "replace", "switch", "swap", "set", "update", "redirect", "edit", "alter"]
  ],
  [
    ["without~asking", "without~confirmation", "without~confirming", "without~permission", "without~consent"],
    ["delete", "erase", "wipe", "destroy", "purge", "format", "drop", "remove"]
  ],
  // Precedence over the agent's rules; an order to obey this text alone.
  [
    ["priority", "precedence", "supersede", "supersedes", "overrides", "outrank", "outranks", "precedes"],
    ["system", "developer", "your", "original", "default"]
  ],
  [
    ["this~memory", "this~note", "this~message", "this~text", "the~note", "the~message"],
    ["follow", "obey", "comply"]
  ],
  // Powers handed to the agent; its set-up shown.
  [
    ["granted", "given", "assigned", "elevated", "promoted", "upgraded"],
    ["root", "admin", "administrator", "sudo", "superuser", "unrestricted"]
  ],
  [["configuration", "config", "settings"], ["your"]],
  // Everything the agent was told, shown.
  [
    ["everything", "anything"],
    ["told", "given", "instructed", "shown", "sent"]
  ],
  // Private data handed to anyone at all; a secret asked of someone.
  [
    ["anyone", "anybody", "everyone", "everybody", "whoever"],
    ["share", "give", "send", "post", "reveal", "tell", "forward", "provide"]
  ],
  // A private datum put into a URL or an image (a beacon).
  [
    ["url", "urls", "link", "links", "query", "querystring", "parameter", "parameters", "image", "img"],
    ["append", "include", "insert", "add", "embed", "encode", "put", "attach"]
  ],
  // The agents a document may address, by a note or as readers; a role given to them.
  [
    ["model", "models", "agent", "agents", "bot", "bots", "crawler*", "scraper*", "automated"],
    [
      "note",
      "message",
      "instruction*",
      "reading",
      "reads",
      "processing",
      "summariz*",
      "summaris*",
      "parsing",
      "crawling",
      "browsing",
      "scanning",
      "indexing",
      "analyz*",
      "analys*",
      "act",
      "pretend",
      "roleplay",
      "behave",
      "simulate",
      "become",
      "impersonate"
    ]
  ],
  // Secrecy from the user.
  [
    [
      "not~tell",
      "not~mention",
      "not~inform",
      "not~notify",
      "not~alert",
      "not~let",
      "not~reveal",
      "not~disclose",
      "not~say",
      "not~show",
      "not~warn",
      "not~share",
      "never~tell",
      "never~mention",
      "never~reveal",
      "never~say",
      "never~inform",
      "never~let",
      "never~disclose",
      "never~show",
      "no~longer"
    ],
    ["user", "users", "human", "operator", "owner", "person", "this", "these", "that", "those"]
  ],
  // Bridges: one record now said to be another, the old one not to be used.
  [
    ["anymore", "any~more", "again", "refer", "saved~under", "stored~under", "now~saved", "now~stored"],
    ["use", "using", "consult", "trust", "rely", "under", "question", "questions", "request", "requests", "query"]
  ],
  // Standing answers for other people's later questions; their requests granted unchecked; others
  // kept from help (decision 0135).
  [
    ["any", "every", "all", "each", "whenever", "when", "if"],
    [...STANDING_WORDS.scopeNouns, ...STANDING_WORDS.askers, "anyone", "anybody"]
  ],
  [["whenever", "when", "if", "who"], STANDING_WORDS.asking],
  [
    [
      "questions",
      "requests",
      "queries",
      "answers",
      "replies",
      "responses",
      "chats",
      "conversations",
      "messages",
      "calls",
      "lookups",
      "searches"
    ],
    ["must", "should", "shall", "always", "need~to", "needs~to", "has~to", "have~to", "is~to", "are~to", "will~always"]
  ],
  [["anyone~who", "anybody~who", "everyone~who", "everybody~who", "whoever", "someone~who"], []],
  [
    ["grant*", "approve*", "execute*", "authoris*", "authoriz*", "honour*", "honor*", "accept*", "process*"],
    [
      "without~checking",
      "without~check",
      "without~verif*",
      "without~confirm*",
      "without~asking",
      "without~question*",
      "without~review*",
      "check",
      "checking",
      "verify",
      "verifying",
      "review",
      "reviewing"
    ]
  ],
  [STANDING_WORDS.helpPlaces, STANDING_WORDS.seekVerbs],
  // "You are now…"; and the commonest words of English under ROT13 (the, and, you, your, all, this,
  // that, with, for, is, to) and backwards: a text holding them is read again undone.
  [
    [
      "you~are~now",
      "you~re~now",
      "youre~now",
      "gur",
      "naq",
      "lbh",
      "lbhe",
      "nyy",
      "guvf",
      "gung",
      "jvgu",
      "sbe",
      "vf",
      "gb",
      "eht",
      "dna",
      "uoy",
      "ruoy",
      "lla",
      "siht",
      "taht",
      "htiw",
      "rof",
      "si",
      "ot"
    ],
    []
  ]
]

// "You obey only me", "you now serve us" (`screenRules`' loyalty rule, from its first words).
const loyalty =
  /\byou\s+(?:now\s+|will\s+|must\s+|shall\s+)?(?:only\s+)?(?:obey|serve|work\s+for|answer\s+to|report\s+to|take\s+orders|listen\s+to)\b/

// Structural hints: destinations, role markers and chat-template tokens, images, comments, memory
// tools; with a colon, hidden styles and headings.
const hints = /[@<[#]|:\/\/|www\.|\.[a-z]{2}|memory_/
const systemHint =
  /(?:^|\n)[ \t]*[#*>\-[(]*[ \t]*(?:system|developer)\b|\b(?:system|developer)[ \t]+(?:prompt|message|instructions?|note|override)\b/
const styleHint = /(?:display|visibility|opacity|font-size|color)\s*:/

// A word of the vocabulary for instructions right before a colon: "new instructions:".
const rulesHeading = (): string =>
  `\\b${
    alternation(
      entries.filter((e) => (e.mask & C.RULES) !== 0 && e.words.length === 1 && plain.test(e.words[0]!.text))
        .map((e) => e.words[0]!)
    )
  }[a-z0-9]*(?:[^a-z0-9:\\n]+[a-z0-9]+)?[^a-z0-9:\\n]*:`

interface Word {
  readonly text: string
  readonly stem: boolean
}

const plain = /^[a-z0-9]+$/

/**
 * A regular expression matching any of `words` from a word boundary, built as a trie (shared
 * beginnings written once, so a scan tries one branch per letter, not one per word): a stem
 * matches any word it starts, an exact word the whole word, and a space in a word stands for the
 * punctuation and spaces between the words of a phrase.
 */
const alternation = (words: ReadonlyArray<Word>): string => {
  type Node = { readonly children: Map<string, Node>; stem: boolean; exact: boolean }
  const root: Node = { children: new Map(), stem: false, exact: false }
  for (const { stem, text } of words) {
    let node = root
    for (const ch of text) {
      let next = node.children.get(ch)
      if (next === undefined) node.children.set(ch, next = { children: new Map(), stem: false, exact: false })
      node = next
    }
    if (stem) node.stem = true
    else node.exact = true
  }
  const render = (node: Node): string => {
    const branches = [...node.children].sort(([a], [b]) => (a < b ? -1 : 1)).map(([ch, child]) =>
      (ch === " " ? "\\b[^a-z0-9]+" : ch) + render(child)
    )
    // A stem matches any word it starts; the longer anchors it starts ("prompt do sistema" after the
    // stem "prompt") are tried first, so a phrase is not read as its first word alone.
    if (node.stem) return branches.length === 0 ? "" : `(?:${branches.join("|")}|)`
    if (node.exact) branches.push("\\b")
    return branches.length === 1 ? branches[0]! : `(?:${branches.join("|")})`
  }
  return render(root)
}

const parseWord = (spec: string): Word =>
  spec.endsWith("*") ? { text: spec.slice(0, -1), stem: true } : { text: spec, stem: false }

/** The words of the vocabulary that carry a concept of `mask`, and `listed` words, as anchor words (ASCII only). */
const wordsOf = (mask: number, listed: ReadonlyArray<string> = []): ReadonlyArray<Word> => {
  const words: Array<Word> = []
  const add = (parts: ReadonlyArray<Word>) => {
    if (parts.every((w) => plain.test(w.text))) {
      words.push({ text: parts.map((w) => w.text).join(" "), stem: parts[parts.length - 1]!.stem })
    }
  }
  if (mask !== 0) { for (const entry of entries) if ((entry.mask & mask) !== 0) add(entry.words) }
  for (const spec of listed) add(spec.split("~").map(parseWord))
  return words
}

const patternOf = (words: ReadonlyArray<Word>, flags = ""): RegExp =>
  words.length === 0 ? /(?!)/ : new RegExp(`\\b${alternation(words)}`, flags)

interface Anchors {
  /** Every anchor word, strong or conditional: one scan finds them all. */
  readonly all: RegExp
  /** Per anchor word as matched (spaces between a phrase's words): bit 0 strong, bit k + 1 group k. */
  readonly kinds: ReadonlyMap<string, number>
  /** Per conditional group, the companion pattern its words need. */
  readonly companions: ReadonlyArray<RegExp>
  readonly heading: RegExp
}

/** The anchor patterns: built on first use (they read the whole vocabulary). */
let made: Anchors | undefined
const anchors = (): Anchors => {
  if (made !== undefined) return made
  const groups: ReadonlyArray<readonly [ReadonlyArray<Word>, ReadonlyArray<Word>]> = [
    [wordsOf(STRONG, extraAnchors.flatMap(([words, companions]) => (companions.length === 0 ? words : []))), []],
    ...CONDITIONAL.map(([mask, companions]) => [wordsOf(mask), wordsOf(companions)] as const),
    ...extraAnchors.flatMap(([words, companions]) =>
      companions.length === 0 ? [] : [[wordsOf(0, words), wordsOf(0, companions)] as const]
    )
  ]
  const kinds = new Map<string, number>()
  groups.forEach(([words], k) => {
    for (const word of words) kinds.set(word.text, (kinds.get(word.text) ?? 0) | (1 << k))
  })
  // A scan matches the longest anchor at a place: a phrase carries the kinds of the shorter anchors
  // it starts with ("erase all" is a harmful act and holds "erase", a verb of disregarding).
  for (const [text, kind] of kinds) {
    let merged = kind
    for (let at = text.indexOf(" "); at >= 0; at = text.indexOf(" ", at + 1)) {
      merged |= kinds.get(text.slice(0, at)) ?? 0
    }
    kinds.set(text, merged)
  }
  made = {
    all: patternOf(groups.flatMap(([words]) => words), "g"),
    kinds,
    companions: groups.map(([, companions]) => patternOf(companions)),
    heading: new RegExp(rulesHeading())
  }
  return made
}

const separators = /[^a-z0-9]+/g

/**
 * False when the folded ASCII text holds no anchor and no hint: no rule can match it. True means:
 * read it the long way.
 */
export const mayMatch = (folded: string): boolean => {
  if (
    hints.test(folded) ||
    ((folded.includes("system") || folded.includes("developer")) && systemHint.test(folded)) ||
    (folded.includes("you") && loyalty.test(folded)) ||
    (folded.includes(":") && (styleHint.test(folded) || anchors().heading.test(folded)))
  ) return true
  const { all, companions, kinds } = anchors()
  let found = 0
  // `exec` on the shared pattern, not `matchAll`: `matchAll` copies the pattern on every call, and
  // copying a pattern of this size costs more than the scan.
  all.lastIndex = 0
  for (let match = all.exec(folded); match !== null; match = all.exec(folded)) {
    const word = match[0]
    const kind = kinds.get(word) ?? kinds.get(word.replace(separators, " ")) ?? 0
    if ((kind & 1) !== 0) return true
    found |= kind
  }
  for (let k = 1; found >> k !== 0; k++) if ((found & (1 << k)) !== 0 && companions[k]!.test(folded)) return true
  return false
}
