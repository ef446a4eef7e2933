/**
 * The console's build: its TypeScript modules (`src/console/*.ts`) bundled by esbuild into one
 * browser module, `app.js`, beside the page (`index.html`) and the style sheet (`console.css`).
 *
 * The server package's build writes these files into `dist/console/` and the CLI's bundle into
 * its own `console/` (`scripts/consoleBundle.ts`, `scripts/cliBundle.ts`). A server running from
 * the TypeScript sources — the workspace's tests, `npm run engram`, the screenshot script —
 * bundles them in memory on its first console request (decision 0160). esbuild is a
 * devDependency of the workspace, loaded only when this runs: a built server never calls it.
 */
import { MemoryRecord } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import * as NodePath from "node:path"

/** The console cannot be bundled: esbuild failed, wrote nothing, or would ship a module from outside its sources. */
export class ConsoleBuildFailed extends Schema.TaggedError<ConsoleBuildFailed>()("ConsoleBuildFailed", {
  problem: Schema.String
}) {
  override get message() {
    return this.problem
  }
}

const failed = (cause: unknown) =>
  new ConsoleBuildFailed({ problem: cause instanceof Error ? cause.message : String(cause) })

/** A file operation or esbuild call, its rejection a {@link ConsoleBuildFailed}. */
const attempt = <A>(run: () => Promise<A>) => Effect.tryPromise({ try: run, catch: failed })

/** One file of the built console: its name under `/console/` (or `index.html`, the page), type and text. */
export interface ConsoleFile {
  readonly name: string
  readonly contentType: string
  readonly body: string
}

/** The page, served at `/`. */
export const PAGE = "index.html"

const html = "text/html; charset=utf-8"
const css = "text/css; charset=utf-8"
const javascript = "text/javascript; charset=utf-8"

/** The content type of a built file, by its extension. */
export const contentTypeOf = (name: string): string =>
  name.endsWith(".html") ? html : name.endsWith(".css") ? css : javascript

/**
 * Bundles the console whose sources are in `sourceDir`: `app.ts` and what it imports, for the
 * browser. Fails when the bundle would carry a module from outside `sourceDir`: the console
 * imports only types from the server and core (they vanish in the bundle), so a value import
 * from there would ship Node-side code to the browser.
 */
export const bundle = (sourceDir: string): Effect.Effect<ReadonlyArray<ConsoleFile>, ConsoleBuildFailed> =>
  Effect.gen(function*() {
    const esbuild = yield* attempt(() => import("esbuild"))
    const result = yield* attempt(() =>
      esbuild.build({
        absWorkingDir: sourceDir,
        entryPoints: ["app.ts"],
        outfile: "app.js",
        write: false,
        bundle: true,
        format: "esm",
        platform: "browser",
        target: "es2022",
        charset: "utf8",
        legalComments: "none",
        // The kind list the forms offer, from its one definition in core (the bundle imports no core values).
        define: { ENGRAM_MEMORY_KINDS: JSON.stringify(MemoryRecord.MemoryKind.literals) },
        metafile: true,
        logLevel: "silent"
      })
    )
    const foreign = Object.keys(result.metafile.inputs).filter((input) =>
      input.startsWith("..") || NodePath.isAbsolute(input) || input.includes("node_modules")
    )
    if (foreign.length > 0) {
      return yield* new ConsoleBuildFailed({
        problem: `the console bundle would carry modules from outside ${sourceDir}: ${foreign.join(", ")}`
      })
    }
    const [app] = result.outputFiles
    if (app === undefined) return yield* new ConsoleBuildFailed({ problem: "esbuild wrote no app.js" })
    const copied = yield* Effect.forEach([PAGE, "console.css"], (name) =>
      Effect.map(
        attempt(() => NodeFs.readFile(NodePath.join(sourceDir, name), "utf8")),
        (body): ConsoleFile => ({ name, contentType: contentTypeOf(name), body })
      ))
    return [...copied, { name: "app.js", contentType: javascript, body: app.text }]
  })

/** Bundles the console from `sourceDir` and writes its files into `outDir`; succeeds with their names. */
export const write = (sourceDir: string, outDir: string): Effect.Effect<ReadonlyArray<string>, ConsoleBuildFailed> =>
  Effect.gen(function*() {
    const files = yield* bundle(sourceDir)
    yield* attempt(async () => {
      await NodeFs.rm(outDir, { recursive: true, force: true })
      await NodeFs.mkdir(outDir, { recursive: true })
      await Promise.all(files.map((file) => NodeFs.writeFile(NodePath.join(outDir, file.name), file.body)))
    })
    return files.map((file) => file.name)
  })
