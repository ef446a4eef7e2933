/**
 * The docs compile. Every ```ts / ```typescript block of README.md, docs/ and the packages' READMEs
 * is written out as a module and typechecked, all in one `tsc` run, against the workspace's sources
 * (the `engram-source` condition) — so a rename or a changed signature that a guide still shows
 * fails here, with the guide's file and line.
 *
 * How a snippet is read:
 *
 * - It is a module of its own: it imports what it uses.
 * - A `yield*` outside any generator makes the snippet (less its imports) the body of an
 *   `Effect.gen`, so a guide can show the steps of a program without the wrapper.
 * - What a snippet assumes but does not show (a config built earlier in the guide, say) is declared
 *   in an HTML comment right before the fence, hidden from readers:
 *
 *   <!-- snippet given:
 *   import type { StablePrefix } from "@engram/runtime"
 *   declare const config: StablePrefix.AgentConfig
 *   -->
 *
 * - `<!-- snippet: fragment (why) -->` right before the fence leaves a block out. Keep these rare,
 *   and say why in the comment.
 *
 * The same file checks that `docs/decisions/README.md` indexes every decision record.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { runProcess } from "../packages/cli/test/utilities.js"

const repoRoot = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")

/** One line of a generated file: its text and the Markdown line it came from, if any. */
interface Line {
  readonly text: string
  readonly origin?: { readonly file: string; readonly line: number } | undefined
}

interface Snippet {
  readonly file: string
  /** 1-based line of the first line of code (after the fence). */
  readonly line: number
  readonly code: ReadonlyArray<string>
  readonly given: ReadonlyArray<string>
  readonly givenLine: number
  readonly fragment: boolean
}

const markdownFiles = (): ReadonlyArray<string> => {
  const found: Array<string> = ["README.md"]
  const walk = (dir: string) => {
    for (const entry of NodeFs.readdirSync(NodePath.join(repoRoot, dir), { withFileTypes: true })) {
      const path = NodePath.posix.join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".md")) found.push(path)
    }
  }
  walk("docs")
  for (const pkg of NodeFs.readdirSync(NodePath.join(repoRoot, "packages"))) {
    if (NodeFs.existsSync(NodePath.join(repoRoot, "packages", pkg, "README.md"))) {
      found.push(`packages/${pkg}/README.md`)
    }
  }
  return found.sort()
}

const fence = /^(\s*)(`{3,})\s*([\w-]*)(.*)$/

/** The TypeScript blocks of one Markdown file, each with the marker comment before it. */
const snippetsOf = (file: string): ReadonlyArray<Snippet> => {
  const lines = NodeFs.readFileSync(NodePath.join(repoRoot, file), "utf8").split("\n")
  const snippets: Array<Snippet> = []
  for (let i = 0; i < lines.length; i++) {
    const open = fence.exec(lines[i]!)
    if (open === null) continue
    const [, indent, ticks, language] = open
    let end = i + 1
    while (end < lines.length && !lines[end]!.trimStart().startsWith(ticks!)) end++
    if (language === "ts" || language === "typescript") {
      // The marker: an HTML comment ending on the last non-blank line before the fence.
      let before = i - 1
      while (before >= 0 && lines[before]!.trim() === "") before--
      let given: Array<string> = []
      let givenLine = 0
      let fragment = false
      if (before >= 0 && lines[before]!.trim().endsWith("-->")) {
        let start = before
        while (start > 0 && !lines[start]!.includes("<!--")) start--
        const comment = lines.slice(start, before + 1).join("\n")
        const marker = /^\s*<!--\s*snippet(:\s*fragment\b|\s+given:)([\s\S]*?)-->\s*$/.exec(comment)
        if (marker !== null && marker[1]!.includes("fragment")) fragment = true
        else if (marker !== null) {
          given = marker[2]!.split("\n").filter((line) => line.trim() !== "")
          givenLine = start + 2
        }
      }
      snippets.push({
        file,
        line: i + 2,
        code: lines.slice(i + 1, end).map((line) => (line.startsWith(indent!) ? line.slice(indent!.length) : line)),
        given,
        givenLine,
        fragment
      })
    }
    i = end
  }
  return snippets
}

/** Whether `source` has a `yield` outside any generator (parsed as a `yield` identifier or expression). */
const yieldsAtTopLevel = (source: ts.SourceFile): boolean => {
  let found = false
  const visit = (node: ts.Node, inGenerator: boolean) => {
    if (found) return
    const generator = ts.isFunctionLike(node)
      ? (node as ts.FunctionLikeDeclaration).asteriskToken !== undefined
      : inGenerator
    if (!generator && (ts.isYieldExpression(node) || (ts.isIdentifier(node) && node.text === "yield"))) {
      found = true
      return
    }
    ts.forEachChild(node, (child) => visit(child, ts.isFunctionLike(node) ? generator : inGenerator))
  }
  visit(source, false)
  return found
}

/** Splits numbered lines into import declarations and the rest, by whole lines. */
const splitImports = (lines: ReadonlyArray<Line>): { imports: Array<Line>; rest: Array<Line> } => {
  const source = ts.createSourceFile("s.ts", lines.map((l) => l.text).join("\n"), ts.ScriptTarget.Latest, true)
  const importLines = new Set<number>()
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement)) continue
    const first = source.getLineAndCharacterOfPosition(statement.getStart()).line
    const last = source.getLineAndCharacterOfPosition(statement.getEnd()).line
    for (let l = first; l <= last; l++) importLines.add(l)
  }
  return {
    imports: lines.filter((_, i) => importLines.has(i)),
    rest: lines.filter((_, i) => !importLines.has(i))
  }
}

/** The module a snippet is checked as, line by line. */
const moduleOf = (snippet: Snippet): ReadonlyArray<Line> => {
  const numbered = (texts: ReadonlyArray<string>, from: number): Array<Line> =>
    texts.map((text, i) => ({ text, origin: { file: snippet.file, line: from + i } }))
  const given = splitImports(numbered(snippet.given, snippet.givenLine))
  const code = splitImports(numbered(snippet.code, snippet.line))
  const body = code.rest.map((l) => l.text).join("\n")
  const wrap = yieldsAtTopLevel(ts.createSourceFile("s.ts", body, ts.ScriptTarget.Latest, true))
  return [
    { text: `// ${snippet.file}:${snippet.line}` },
    ...(wrap ? [{ text: `import { gen as snippetGen__ } from "effect/Effect"` }] : []),
    ...given.imports,
    ...code.imports,
    ...given.rest,
    ...(wrap ? [{ text: "export const snippet__ = snippetGen__(function*() {" }] : []),
    ...code.rest,
    ...(wrap ? [{ text: "})" }] : []),
    { text: "export {}" }
  ]
}

const tsc = NodePath.join(repoRoot, "node_modules", "typescript", "bin", "tsc")

describe("documentation", () => {
  it("every TypeScript snippet typechecks against the workspace", { timeout: 240_000 }, async () => {
    const snippets = markdownFiles().flatMap(snippetsOf)
    const checked = snippets.filter((s) => !s.fragment)
    // The test must see the guides' snippets (a broken extractor would pass vacuously).
    expect(checked.length).toBeGreaterThan(30)
    expect(snippets.filter((s) => s.fragment).length).toBeLessThanOrEqual(3)

    const outputRoot = NodePath.join(repoRoot, "test", ".output")
    NodeFs.mkdirSync(outputRoot, { recursive: true })
    const dir = NodeFs.mkdtempSync(NodePath.join(outputRoot, "doc-snippets-"))
    try {
      const origins = new Map<string, ReadonlyArray<Line>>()
      for (const snippet of checked) {
        const name = `${snippet.file.replace(/[^A-Za-z0-9]+/g, "_")}_L${snippet.line}.ts`
        const lines = moduleOf(snippet)
        origins.set(name, lines)
        NodeFs.writeFileSync(NodePath.join(dir, name), lines.map((l) => l.text).join("\n") + "\n")
      }
      NodeFs.writeFileSync(
        NodePath.join(dir, "tsconfig.json"),
        JSON.stringify({
          extends: NodePath.join(repoRoot, "tsconfig.base.json"),
          compilerOptions: {
            noEmit: true,
            composite: false,
            declaration: false,
            declarationMap: false,
            sourceMap: false,
            incremental: false,
            customConditions: ["engram-source"],
            // A snippet shows a step; what it names need not be used.
            noUnusedLocals: false,
            noUnusedParameters: false
          },
          include: ["*.ts"]
        })
      )
      const run = await runProcess(process.execPath, [
        tsc,
        "-p",
        NodePath.join(dir, "tsconfig.json"),
        "--pretty",
        "false"
      ], {
        cwd: dir,
        timeout: 220_000
      })
      expect(run.code, `tsc was stopped: ${run.stderr}`).not.toBeNull()
      const problems: Array<string> = []
      let last: string | undefined
      for (const text of run.stdout.split("\n")) {
        const at = /^(.+?\.ts)\((\d+),(\d+)\): error (TS\d+: .*)$/.exec(text)
        if (at === null) {
          // A continuation line of the previous error.
          if (last !== undefined && text.trim() !== "") problems[problems.length - 1] += ` ${text.trim()}`
          continue
        }
        const [, path, line, , message] = at
        const origin = origins.get(NodePath.basename(path!))?.[Number(line) - 1]?.origin
        last = origin === undefined ? `${path}:${line}` : `${origin.file}:${origin.line}`
        problems.push(`${last}: ${message}`)
      }
      if (problems.length === 0) expect(run.code, run.stdout + run.stderr).toBe(0)
      expect(problems).toEqual([])
    } finally {
      NodeFs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("the decision index lists every record, and every line of it names a record", () => {
    const dir = NodePath.join(repoRoot, "docs", "decisions")
    const records = NodeFs.readdirSync(dir).filter((name) => /^\d{4}-.+\.md$/.test(name)).sort()
    const index = NodeFs.readFileSync(NodePath.join(dir, "README.md"), "utf8")
    const linked = [...index.matchAll(/^\| \[(\d{4})\]\((\d{4}-[^)]+\.md)\) \|/gm)].map(([, number, file]) => {
      expect(file!.startsWith(number!)).toBe(true)
      return file!
    })
    expect(linked).toEqual(records)
    // Every record is numbered.
    expect(NodeFs.readdirSync(dir).filter((name) => name.endsWith(".md") && name !== "README.md")).toEqual(records)
  })
})
