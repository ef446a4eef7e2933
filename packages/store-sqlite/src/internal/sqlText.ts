/**
 * Small pieces of SQL text and row reading that every SQLite store uses: batching, multi-row
 * INSERT statements (built once per row count), and tolerant readers for stored JSON and times.
 *
 * @internal
 */

/** Splits `items` into consecutive slices of at most `size`. */
export const chunksOf = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const chunks: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size))
  return chunks
}

/**
 * `rows => "INSERT INTO table (columns) VALUES (?,…),(?,…)…"`, cached per row count: a batch
 * insert prepares one statement per distinct chunk size, not one per call.
 */
export const multiRowInsert = (table: string, columns: ReadonlyArray<string>): (rows: number) => string => {
  const cache = new Map<number, string>()
  const tuple = `(${new Array(columns.length).fill("?").join(",")})`
  return (rows) => {
    let text = cache.get(rows)
    if (text === undefined) {
      text = `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${new Array(rows).fill(tuple).join(",")}`
      cache.set(rows, text)
    }
    return text
  }
}

/** Parses stored JSON text; `undefined` when it is not a string or not JSON (the decoder then names the field). */
export const parseJsonOrUndefined = (text: unknown): unknown => {
  if (typeof text !== "string") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

// The largest time JavaScript's Date can represent, in epoch milliseconds.
const MAX_EPOCH_MILLIS = 8_640_000_000_000_000

/** True for an integer number of epoch milliseconds that a date can hold. */
export const isEpochMillis = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && Math.abs(value) <= MAX_EPOCH_MILLIS
