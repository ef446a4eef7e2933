/**
 * The SQL both stores rank conversation neighbours with (decision 0113): a position's score is its
 * best match's (`p`), and every position's neighbours are read in one pass of window functions
 * over the positions of each scope and thread in turn order (`x`). A frame of `RANGE BETWEEN o
 * PRECEDING AND o PRECEDING` holds exactly the position `o` turns before, as positions are distinct
 * integers. Each store joins `x` back to its matches (`s`) in its own dialect.
 *
 * @since 0.1.0
 */

/**
 * The common table expressions `p` and `x` over the matches `s` (columns `scope`, `thread`,
 * `turn`, `score`), with one column `n<i>` per offset in `x`, and the pieces a store's join reads:
 * `columns` (`x.n0, x.n1, …`), `sum` (their sum, a missing neighbour counting 0) and `none`
 * (`NULL AS n0, …`, for matches without a position). Numbers only: safe as SQL text.
 *
 * @since 0.1.0
 * @category sql
 */
export const windowSql = (offsets: ReadonlyArray<number>): {
  readonly ctes: string
  readonly columns: string
  readonly sum: string
  readonly none: string
} => {
  const frame = (offset: number) => {
    const bound = offset < 0 ? `${-offset} PRECEDING` : `${offset} FOLLOWING`
    return `RANGE BETWEEN ${bound} AND ${bound}`
  }
  const neighbours = offsets.map((offset, i) => `max(score) OVER (w ${frame(offset)}) AS n${i}`).join(", ")
  return {
    ctes: `p AS MATERIALIZED (
      SELECT scope, thread, turn, max(score) AS score FROM s WHERE thread IS NOT NULL GROUP BY scope, thread, turn),
    x AS MATERIALIZED (
      SELECT scope, thread, turn, ${neighbours} FROM p WINDOW w AS (PARTITION BY scope, thread ORDER BY turn))`,
    columns: offsets.map((_, i) => `x.n${i}`).join(", "),
    sum: offsets.map((_, i) => `coalesce(x.n${i}, 0)`).join(" + "),
    none: offsets.map((_, i) => `NULL AS n${i}`).join(", ")
  }
}
