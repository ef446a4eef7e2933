/**
 * `engram … --help`: `@effect/cli`'s own help document for a command (its `HelpDoc`: description,
 * arguments, options, subcommands) and its `Usage`, laid out by our printer on
 * `@effect/printer` — paragraphs reflowed at a page width, the usage line naming the whole
 * command (`$ engram memory add …`), each subcommand's description in a column beside its usage,
 * and without the sentences `@effect/cli` writes under every option whatever it is.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import type * as CliConfig from "@effect/cli/CliConfig"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Span from "@effect/cli/HelpDoc/Span"
import * as Options from "@effect/cli/Options"
import * as Usage from "@effect/cli/Usage"
import * as Ansi from "@effect/printer-ansi/Ansi"
import * as AnsiDoc from "@effect/printer-ansi/AnsiDoc"
import * as Doc from "@effect/printer/Doc"
import * as Option from "effect/Option"

/**
 * The page width help is laid out at.
 *
 * @since 0.1.0
 * @category constants
 */
export const WIDTH = 100

/**
 * How to print: the page width, and whether to keep the ANSI styling (bold headings).
 *
 * @since 0.1.0
 * @category models
 */
export interface RenderOptions {
  readonly width?: number | undefined
  readonly color?: boolean | undefined
}

// The column a subcommand's description starts at, after its usage (a longer usage puts the
// description on the next line, at the same column).
const COMMAND_COLUMN = 20

type Leaf = { readonly text: string; readonly styles: ReadonlyArray<Ansi.Ansi> }

const leaves = (span: Span.Span, styles: ReadonlyArray<Ansi.Ansi> = []): ReadonlyArray<Leaf> => {
  switch (span._tag) {
    case "Text":
      return [{ text: span.value, styles }]
    case "URI":
      return [{ text: span.value, styles: [...styles, Ansi.underlined] }]
    case "Highlight":
      return leaves(span.value, [...styles, Ansi.color(span.color)])
    case "Strong":
      return leaves(span.value, [...styles, Ansi.bold])
    case "Weak":
      return leaves(span.value, [...styles, Ansi.blackBright])
    case "Sequence":
      return [...leaves(span.left, styles), ...leaves(span.right, styles)]
  }
}

// Between two words: a space, or a new line (at the current indentation) when the next word would
// cross the page width. Written with the printer's column and page-width reactions, not its
// `softLine`: that is a choice between two layouts, and @effect/printer 0.51 settles a choice by
// laying out both branches to the end of the document — exponential in the number of words (a
// 60-word paragraph did not finish in two minutes).
const space = (nextWord: number): AnsiDoc.AnsiDoc =>
  Doc.column((column) =>
    Doc.pageWidth((page) =>
      page._tag === "AvailablePerLine" && column + 1 + nextWord > page.lineWidth ? Doc.hardLine : Doc.char(" ")
    )
  )

// Words filled onto lines; words of neighbouring spans with no space between them stay together.
const reflow = (parts: ReadonlyArray<Leaf>): AnsiDoc.AnsiDoc => {
  const words: Array<Array<{ readonly text: string; readonly styles: ReadonlyArray<Ansi.Ansi> }>> = []
  let open = false
  for (const leaf of parts) {
    for (const piece of leaf.text.split(/(\s+)/)) {
      if (piece === "") continue
      if (/^\s+$/.test(piece)) {
        open = false
        continue
      }
      if (open) words.at(-1)!.push({ text: piece, styles: leaf.styles })
      else words.push([{ text: piece, styles: leaf.styles }])
      open = true
    }
  }
  return Doc.hcat(words.map((word, i) => {
    const doc = Doc.hcat(
      word.map((part) =>
        part.styles.reduce<AnsiDoc.AnsiDoc>((styled, style) => Doc.annotate(styled, style), Doc.string(part.text))
      )
    )
    const length = word.reduce((sum, part) => sum + part.text.length, 0)
    return i === 0 ? doc : Doc.cat(space(length), doc)
  }))
}

// @effect/cli lays a subcommand out as one paragraph: its usage, a run of spaces, its
// description. The run of spaces is the column gap.
const isGap = (leaf: Leaf) => leaf.text.length >= 2 && /^\s+$/.test(leaf.text)

const commandEntry = (span: Span.Span): AnsiDoc.AnsiDoc => {
  const parts = leaves(span)
  const gap = parts.findIndex(isGap)
  if (gap < 0) return Doc.hang(reflow(parts), 4)
  return Doc.hcat([
    Doc.fillBreak(Doc.hang(reflow(parts.slice(0, gap)), 4), COMMAND_COLUMN),
    Doc.spaces(2),
    Doc.align(reflow(parts.slice(gap + 1)))
  ])
}

const text = (span: Span.Span): string => leaves(span).map((leaf) => leaf.text).join("")

const flatten = (doc: HelpDoc.HelpDoc): ReadonlyArray<HelpDoc.HelpDoc> =>
  doc._tag === "Empty" ? [] : doc._tag === "Sequence" ? [...flatten(doc.left), ...flatten(doc.right)] : [doc]

const blankLine = Doc.cat(Doc.hardLine, Doc.hardLine)

const blocks = (doc: HelpDoc.HelpDoc): AnsiDoc.AnsiDoc =>
  Doc.concatWith(flatten(doc).map(block), (a, b) => Doc.hcat([a, blankLine, b]))

const block = (doc: HelpDoc.HelpDoc): AnsiDoc.AnsiDoc => {
  switch (doc._tag) {
    case "Empty":
      return Doc.empty
    case "Header":
      return Doc.annotate(reflow(leaves(doc.value)), Ansi.bold)
    case "Paragraph":
      return reflow(leaves(doc.value))
    case "DescriptionList":
      return Doc.concatWith(
        doc.definitions.map(([term, definition]) => {
          const body = blocks(definition)
          const head = Doc.annotate(reflow(leaves(term)), Ansi.bold)
          return flatten(definition).length === 0 ? head : Doc.hcat([head, Doc.hardLine, Doc.indent(body, 2)])
        }),
        (a, b) => Doc.hcat([a, blankLine, b])
      )
    case "Enumeration":
      return Doc.indent(
        Doc.concatWith(
          doc.elements.map((element) => element._tag === "Paragraph" ? commandEntry(element.value) : blocks(element)),
          (a, b) => Doc.hcat([a, Doc.hardLine, b])
        ),
        2
      )
    case "Sequence":
      return blocks(doc)
  }
}

/**
 * A help document as text: headings, reflowed paragraphs, definitions indented under their terms,
 * lists indented; no line longer than the width (unless one word is).
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (doc: HelpDoc.HelpDoc, options: RenderOptions = {}): string => {
  const layout = { style: "pretty", options: { lineWidth: options.width ?? WIDTH, ribbonFraction: 1 } } as const
  const laid = blocks(doc)
  return options.color === true ? AnsiDoc.render(laid, layout) : Doc.render(Doc.unAnnotate(laid), layout)
}

const paragraphs = (doc: HelpDoc.HelpDoc): ReadonlyArray<string> =>
  flatten(doc).flatMap((part) =>
    part._tag === "Paragraph"
      ? [text(part.value)]
      : part._tag === "DescriptionList"
      ? part.definitions.flatMap(([, definition]) => paragraphs(definition))
      : []
  )

// The sentences @effect/cli writes under an option or argument of each kind whatever it is (its
// type, "optional", "may be repeated"), read from @effect/cli's own help for options that carry
// no description of their own — so they follow the library's wording.
let generatedCache: ReadonlySet<string> | undefined
const generated = (): ReadonlySet<string> => {
  if (generatedCache === undefined) {
    generatedCache = new Set(paragraphs(HelpDoc.blocks([
      Options.getHelp(Options.all([
        Options.text("a").pipe(Options.optional),
        Options.text("b").pipe(Options.repeated),
        Options.text("c").pipe(Options.withDefault("")),
        Options.integer("d"),
        Options.boolean("e"),
        Options.file("f")
      ])),
      Args.getHelp(Args.all([Args.text({ name: "a" }).pipe(Args.repeated), Args.text({ name: "b" })]))
    ])))
  }
  return generatedCache
}

const withoutGenerated = (doc: HelpDoc.HelpDoc): HelpDoc.HelpDoc => {
  const keep = (part: HelpDoc.HelpDoc): ReadonlyArray<HelpDoc.HelpDoc> =>
    part._tag === "Paragraph" && generated().has(text(part.value))
      ? []
      : [
        part._tag === "DescriptionList"
          ? HelpDoc.mapDescriptionList(part, (term, definition) => [term, withoutGenerated(definition)])
          : part
      ]
  return HelpDoc.blocks(flatten(doc).flatMap(keep))
}

/**
 * A usage whose repeated options read as optional (`[--tag]...`): every repeated flag of the CLI
 * may be given zero times, and @effect/cli would print `--tag...`, which reads as required. Pure.
 *
 * @since 0.1.0
 * @category constructors
 */
export const optionalRepeats = (usage: Usage.Usage): Usage.Usage => {
  switch (usage._tag) {
    case "Repeated":
      return usage.usage._tag === "Optional" ? usage : Usage.repeated(Usage.optional(optionalRepeats(usage.usage)))
    case "Optional":
      return usage.usage._tag === "Repeated"
        ? optionalRepeats(usage.usage)
        : Usage.optional(optionalRepeats(usage.usage))
    case "Concat":
      return Usage.concat(optionalRepeats(usage.left), optionalRepeats(usage.right))
    case "Alternation":
      return Usage.alternation(optionalRepeats(usage.left), optionalRepeats(usage.right))
    default:
      return usage
  }
}

/**
 * The help page of the command `path` (its words from the root, e.g. `["engram", "memory",
 * "add"]`): the version line, the usage naming the whole command, and the command's own help
 * document.
 *
 * @since 0.1.0
 * @category constructors
 */
export const page = (input: {
  readonly path: ReadonlyArray<string>
  readonly version: string
  readonly usage: Usage.Usage
  readonly help: HelpDoc.HelpDoc
  readonly config: CliConfig.CliConfig
  /** The command is a group: its usage ends in `<command>`. */
  readonly group?: boolean | undefined
}): HelpDoc.HelpDoc => {
  // A command's usage starts with its own name: the words above it come first.
  const above = input.path.slice(0, -1).join(" ")
  // The root also takes the options every command takes that @effect/cli adds itself.
  const usage = input.path.length === 1
    ? Usage.concat(input.usage, Usage.optional(Usage.named(["--log-level"], Option.none())))
    : input.usage
  return HelpDoc.blocks([
    HelpDoc.p(`${input.path[0] ?? ""} ${input.version}`),
    HelpDoc.h1("USAGE"),
    ...Usage.enumerate(optionalRepeats(usage), input.config).map((line) =>
      HelpDoc.p(
        Span.spans([
          Span.text(`$ ${above === "" ? "" : `${above} `}`),
          line,
          Span.text(input.group === true ? " <command>" : "")
        ])
      )
    ),
    withoutGenerated(input.help)
  ])
}
