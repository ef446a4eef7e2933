/**
 * `node --conditions=engram-source --import tsx scripts/_tune.ts [LoCoMo directory]` — the search
 * behind the ranking parameters' defaults (decisions 0050, 0051; `docs/benchmarks.md`).
 *
 * Replays `MemoryStore.search`'s ranking in process with core's own scoring (`Bm25.idf`,
 * `Bm25.lengthNorm`, `Bm25.rank`) over LoCoMo's turns, tokenized by `SearchTokenizer` as a store
 * indexes them, for a grid of `k1`, `b`, `neighbourWindow` and `neighbourWeight`. The grid is
 * searched on the tuning half — the even-numbered conversations, the same split the recall bench
 * reports (`tuningHalf` in `scripts/bench/recall.ts`) — and the best setting, and the defaults, are
 * then reported on the held-out odd-numbered ones. Evidence recall@10, as in the bench. The
 * search planner (which ranks tokens held by many records after the selective ones) and the
 * stores' tie-breaks are left out, and the replay's R@10 sits about 2 points above the store's
 * (`npm run bench -- recall`): the grid's order is what the replay is for, the bench's figures
 * are the reported ones.
 */
import { Bm25, SearchTokenizer } from "@engram/core"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const dir = process.argv[2] ?? process.env.ENGRAM_LOCOMO ?? "/work/data/locomo10_v2"

interface Turn {
  readonly id: string
  readonly scope: string
  readonly thread: string
  readonly turn: number
  readonly tokens: ReadonlySet<string>
}
interface Question {
  readonly scope: string
  readonly tuning: boolean
  readonly evidence: ReadonlyArray<string>
  /** Every turn of the conversation holding one of the question's tokens, with its summed idf. */
  readonly matches: ReadonlyArray<{ readonly turn: Turn; readonly idfSum: number }>
}

const turns: Array<Turn> = []
const raw: Array<{ scope: string; tuning: boolean; text: string; evidence: Array<string> }> = []
for (const file of NodeFs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
  const name = NodePath.basename(file, ".json").replace(/[^A-Za-z0-9]/g, "")
  const data = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, file), "utf8")) as Record<string, unknown>
  const sample = (Array.isArray(data) ? data[0] : data) as Record<string, unknown>
  const conversation = (sample.conversation ?? sample) as Record<string, unknown>
  const scope = `project:locomo-${name}`
  const known = new Set<string>()
  for (const [key, value] of Object.entries(conversation)) {
    if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue
    ;(value as ReadonlyArray<Record<string, unknown>>).forEach((t, turn) => {
      const caption = typeof t.blip_caption === "string" ? ` [shares ${t.blip_caption}]` : ""
      const id = `${name}-${String(t.dia_id)}`
      known.add(id)
      turns.push({
        id,
        scope,
        thread: `${name}-${key}`,
        turn,
        tokens: new Set(SearchTokenizer.tokenize(`${String(t.speaker)}: ${String(t.text)}${caption}`))
      })
    })
  }
  for (const q of sample.qa as ReadonlyArray<Record<string, unknown>>) {
    if (Number(q.category) === 5) continue
    const evidence = [...new Set(JSON.stringify(q.evidence ?? []).match(/D\d+:\d+/g) ?? [])]
      .map((d) => `${name}-${d}`)
      .filter((id) => known.has(id))
    // The bench's split: the conversation's number, even = tuning.
    if (evidence.length > 0) {
      raw.push({ scope, tuning: Number(name.match(/(\d+)$/)?.[1] ?? 0) % 2 === 0, text: String(q.question), evidence })
    }
  }
}

const documentFrequency = new Map<string, number>()
for (const t of turns) {
  for (const token of t.tokens) documentFrequency.set(token, (documentFrequency.get(token) ?? 0) + 1)
}
const averageLength = turns.reduce((sum, t) => sum + t.tokens.size, 0) / turns.length
const byScope = new Map<string, Array<Turn>>()
for (const t of turns) byScope.set(t.scope, [...(byScope.get(t.scope) ?? []), t])
const questions: ReadonlyArray<Question> = raw.map((q) => {
  const tokens = SearchTokenizer.distinctTokens(q.text)
  const matches = byScope.get(q.scope)!.flatMap((turn) => {
    let idfSum = 0
    for (const token of tokens) {
      if (turn.tokens.has(token)) idfSum += Bm25.idf(turns.length, documentFrequency.get(token) ?? 0)
    }
    return idfSum > 0 ? [{ turn, idfSum }] : []
  })
  return { scope: q.scope, tuning: q.tuning, evidence: q.evidence, matches }
})

/** Evidence R@10 (percent) over the questions of one half, ranked by `Bm25.rank` at `parameters`. */
const recallAt10 = (parameters: Bm25.Parameters, tuning: boolean): number => {
  let sum = 0
  let n = 0
  for (const q of questions) {
    if (q.tuning !== tuning) continue
    const ranked = Bm25.rank(
      q.matches.map(({ idfSum, turn }, i) => ({
        id: turn.id,
        scope: turn.scope,
        position: { thread: turn.thread, turn: turn.turn },
        createdAtMillis: i,
        score: Bm25.rounded(idfSum * Bm25.lengthNorm(turn.tokens.size, averageLength, parameters))
      })),
      parameters
    )
    const top = new Set(ranked.slice(0, 10).map((r) => r.match.id))
    sum += q.evidence.filter((id) => top.has(id)).length / q.evidence.length
    n++
  }
  return (100 * sum) / n
}

const grid: Array<{ parameters: Bm25.Parameters; tuning: number }> = []
for (const k1 of [0.1, 0.3, 0.6, 1.2]) {
  for (const b of [0, 0.25, 0.5, 0.75]) {
    for (const neighbourWindow of [0, 1, 2, 3]) {
      for (const neighbourWeight of neighbourWindow === 0 ? [0] : [0.2, 0.3, 0.5]) {
        const parameters = { k1, b, neighbourWindow, neighbourWeight }
        grid.push({ parameters, tuning: recallAt10(parameters, true) })
      }
    }
  }
}
grid.sort((a, b) => b.tuning - a.tuning)
const show = (label: string, parameters: Bm25.Parameters, tuning = recallAt10(parameters, true)) =>
  console.log(
    `${label}: ${JSON.stringify(parameters)} R@10 tuning ${tuning.toFixed(1)}, held out ${
      recallAt10(parameters, false).toFixed(1)
    }`
  )
console.log(
  `${turns.length} turns; ${
    questions.filter((q) => q.tuning).length
  } tuning questions (even-numbered conversations), ` +
    `${questions.filter((q) => !q.tuning).length} held out (odd-numbered)`
)
grid.slice(0, 8).forEach(({ parameters, tuning }, i) => show(`#${i + 1} on tuning`, parameters, tuning))
show("defaults", Bm25.defaultParameters)
