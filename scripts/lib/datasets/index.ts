/**
 * The conversation-memory datasets the benches read, by name, and the options that say where they
 * are: `--locomo PATH` (or `ENGRAM_LOCOMO`; `--data` is the recall bench's older name for it) and
 * `--beam DIR` (or `ENGRAM_BEAM`: BEAM's `chats/` directory). `--datasets a,b` picks some of them;
 * by default every dataset whose location is given is read.
 */
import { option } from "../benchKit.js"
import * as Beam from "./beam.js"
import type { Dataset } from "./Dataset.js"
import * as Locomo from "./locomo.js"

export * from "./Dataset.js"

/** Every dataset a bench can read. */
export const NAMES = ["locomo", "beam-128k", "beam-500k"] as const
export type Name = typeof NAMES[number]

/** The options every bench that reads datasets takes, for its `--help`. */
export const USAGE = `  --locomo PATH     LoCoMo's locomo10.json or its directory of per-conversation files
                    (default: $ENGRAM_LOCOMO; --data is the same)
  --beam DIR        BEAM's chats/ directory, holding 100K/ and 500K/ (default: $ENGRAM_BEAM)
  --datasets LIST   which of ${NAMES.join(", ")} to read (default: every one whose location is given)`

/** Where each dataset is, from the options or the environment. */
export const locations = (args: ReadonlyArray<string>) => ({
  locomo: option(args, "--locomo") ?? option(args, "--data") ?? process.env.ENGRAM_LOCOMO,
  beam: option(args, "--beam") ?? process.env.ENGRAM_BEAM
})

/** Loads the datasets the options name (see {@link USAGE}); fails naming a dataset with no location. */
export const fromArgs = (args: ReadonlyArray<string>): ReadonlyArray<Dataset> => {
  const where = locations(args)
  const asked = option(args, "--datasets")?.split(",").map((name) => name.trim())
  const names = asked ?? NAMES.filter((name) => (name === "locomo" ? where.locomo : where.beam) !== undefined)
  return names.map((name) => {
    if (!(NAMES as ReadonlyArray<string>).includes(name)) {
      throw new Error(`unknown dataset ${name}: choose from ${NAMES.join(", ")}`)
    }
    if (name === "locomo") {
      if (where.locomo === undefined) throw new Error("locomo: pass --locomo PATH or set ENGRAM_LOCOMO")
      return Locomo.load(where.locomo)
    }
    if (where.beam === undefined) throw new Error(`${name}: pass --beam DIR or set ENGRAM_BEAM`)
    return Beam.load(where.beam, name as Beam.Scale)
  })
}
