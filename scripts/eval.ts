/**
 * `npm run eval [-- --db <path>] [--keep] [--json]`: the routing eval, exactly as `engram eval`
 * runs it — on a fresh SQLite file in the OS temp dir unless `--db` names one. Exits 0 when every
 * hard family passes, 1 when one fails, 2 when the database cannot be opened.
 */
process.argv.splice(2, 0, "eval")
await import("../packages/cli/src/bin.js")
