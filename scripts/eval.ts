/**
 * `npm run eval [-- --db <path>] [--keep] [--json] [--family <name>]…`: the routing eval, exactly as
 * `engram eval` runs it — on a fresh SQLite file in the OS temp dir unless `--db` names one, every
 * family unless `--family` names some. Exits 0 when every hard family run passes, 1 when one fails
 * (or `--family` names no family), 2 when the database cannot be opened.
 */
process.argv.splice(2, 0, "eval")
await import("../packages/cli/src/bin.js")
