/**
 * The review console as the server serves it: the page at `/` (markup only — no inline script or
 * style, so the strict content security policy holds), and its bundled module and style sheet
 * under `/console/`. The page talks only to `/api` with the bearer token the operator signs in
 * with; every value from the store is inserted as text.
 *
 * The files live in `console/` beside the server's modules: built (`app.js`) in
 * `dist/console/` and in the CLI bundle's `console/`, which a built server reads; as TypeScript
 * (`app.ts`) in `src/console/`, which a server running from the sources bundles in memory
 * (`consoleBuild.ts`, decision 0160). Either way once per server, on the first console request.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs/promises"
import { fileURLToPath } from "node:url"
import { bundle, type ConsoleFile, contentTypeOf, PAGE } from "./consoleBuild.js"

/**
 * The console's files cannot be read or bundled (an installation without its `console/` folder,
 * or sources that do not build). The console's routes answer 500; the API is unaffected.
 */
export class ConsoleUnavailable extends Schema.TaggedError<ConsoleUnavailable>()("ConsoleUnavailable", {
  message: Schema.String
}) {}

/** The console, ready to serve: the page and the files under `/console/` by name. */
export interface ConsoleAssets {
  readonly page: ConsoleFile
  readonly files: ReadonlyMap<string, ConsoleFile>
}

/** The `console/` folder beside this module's folder (`dist/console/`, `src/console/`, a bundle's `console/`). */
const directory = fileURLToPath(new URL("../console/", import.meta.url))

const unavailable = (problem: string) => new ConsoleUnavailable({ message: `the console cannot be served: ${problem}` })

const exists = (path: string) =>
  Effect.promise(() =>
    NodeFs.access(path).then(
      () => true,
      () => false
    )
  )

/** The built files, or — beside the TypeScript sources — the sources bundled now. */
const read: Effect.Effect<ReadonlyArray<ConsoleFile>, ConsoleUnavailable> = Effect.gen(function*() {
  if (yield* exists(directory + "app.js")) {
    return yield* Effect.forEach([PAGE, "console.css", "app.js"], (name) =>
      Effect.tryPromise({
        try: async (): Promise<ConsoleFile> => ({
          name,
          contentType: contentTypeOf(name),
          body: await NodeFs.readFile(directory + name, "utf8")
        }),
        catch: (cause) => unavailable(cause instanceof Error ? cause.message : String(cause))
      }))
  }
  if (yield* exists(directory + "app.ts")) {
    return yield* Effect.mapError(bundle(directory), (failure) => unavailable(failure.problem))
  }
  return yield* unavailable(`no console at ${directory}: neither its build (app.js) nor its sources (app.ts)`)
})

/** Loads the console's files (see the module's comment). */
export const load: Effect.Effect<ConsoleAssets, ConsoleUnavailable> = read.pipe(
  Effect.flatMap((all) => {
    const page = all.find((file) => file.name === PAGE)
    return page === undefined
      ? Effect.fail(new ConsoleUnavailable({ message: `the console has no ${PAGE}` }))
      : Effect.succeed({ page, files: new Map(all.filter((file) => file !== page).map((file) => [file.name, file])) })
  })
)

/**
 * The console's routes: the page at `/`, its module and style sheet under `/console/` (404 for any
 * other name), loaded on the first request to either; 500, with the reason logged, when they
 * cannot be.
 */
export const route = HttpApiBuilder.Router.use((router) =>
  Effect.gen(function*() {
    const assets = yield* Effect.cached(load)
    const serve = (pick: (assets: ConsoleAssets) => ConsoleFile | undefined) =>
      assets.pipe(
        Effect.map((loaded) => {
          const found = pick(loaded)
          return found === undefined
            ? HttpServerResponse.empty({ status: 404 })
            : HttpServerResponse.text(found.body, { contentType: found.contentType })
        }),
        Effect.catchTag(
          "ConsoleUnavailable",
          (error) => Effect.as(Effect.logError(error.message), HttpServerResponse.empty({ status: 500 }))
        )
      )
    yield* router.get("/", serve((loaded) => loaded.page))
    yield* router.get(
      "/console/:file",
      Effect.flatMap(
        HttpRouter.params,
        ({ file }) => serve((loaded) => file === undefined ? undefined : loaded.files.get(file))
      )
    )
  })
)
