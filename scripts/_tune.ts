import { SearchTokenizer } from "@engram/core"
import * as NodeFs from "node:fs"
const dir = "/work/data/locomo10_v2"
const files = NodeFs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort()
type Doc = { id: string; conv: number; session: number; turn: number; toks: Set<string> }
const docs: Doc[] = []
const qs: { conv: number; text: string; ev: string[] }[] = []
files.forEach((f, ci) => {
  const d = JSON.parse(NodeFs.readFileSync(`${dir}/${f}`, "utf8"))
  const conv = Array.isArray(d) ? d[0].conversation : d
  const qa = Array.isArray(d) ? d[0].qa : d.qa
  const known = new Set<string>()
  for (const [k, v] of Object.entries(conv)) {
    const m = /^session_(\d+)$/.exec(k)
    if (!m || !Array.isArray(v)) continue
    ;(v as any[]).forEach((t, i) => {
      const cap = typeof t.blip_caption === "string" ? ` [shares ${t.blip_caption}]` : ""
      const id = `${ci}-${t.dia_id}`
      known.add(id)
      docs.push({
        id,
        conv: ci,
        session: Number(m[1]),
        turn: i,
        toks: new Set(
          SearchTokenizer.tokenize(`${t.speaker}: ${t.text}${cap}`, process.env.LANG0 === "none" ? "none" : "english")
        )
      })
    })
  }
  for (const q of qa) {
    if (Number(q.category) === 5) continue
    const ev = [...new Set(JSON.stringify(q.evidence ?? []).match(/D\d+:\d+/g) ?? [])].map((x) => `${ci}-${x}`).filter((
      x
    ) => known.has(x))
    if (ev.length) qs.push({ conv: ci, text: q.question, ev })
  }
})
const N = docs.length
const df = new Map<string, number>()
for (const d of docs) for (const t of d.toks) df.set(t, (df.get(t) ?? 0) + 1)
const avg = docs.reduce((s, d) => s + d.toks.size, 0) / N
const byConv = new Map<number, Doc[]>()
for (const d of docs) (byConv.get(d.conv) ?? byConv.set(d.conv, []).get(d.conv)!).push(d)
const key = (d: Doc) => `${d.conv}/${d.session}/${d.turn}`
const at = new Map<string, Doc>()
for (const d of docs) at.set(key(d), d)
const idf = (t: string) => {
  const f = df.get(t) ?? 0
  return Math.log(1 + (N - f + 0.5) / (f + 0.5))
}
const run = (k1: number, b: number, lam: number, win: number, mode: string, subset: (c: number) => boolean) => {
  let sum = 0, n = 0
  for (const q of qs) {
    if (!subset(q.conv)) continue
    const qt = SearchTokenizer.distinctTokens(q.text)
    const base = new Map<Doc, number>()
    for (const d of byConv.get(q.conv)!) {
      let s = 0
      for (const t of qt) if (d.toks.has(t)) s += idf(t)
      if (s > 0) base.set(d, s * (k1 + 1) / (1 + k1 * (1 - b + b * d.toks.size / avg)))
    }
    const fin = new Map<Doc, number>()
    const pool = mode === "expand" ? byConv.get(q.conv)! : [...base.keys()]
    for (const d of pool) {
      let s = base.get(d) ?? 0
      if (lam > 0) {
        for (let o = -win; o <= win; o++) {
          if (o === 0) continue
          const nb = at.get(`${d.conv}/${d.session}/${d.turn + o}`)
          if (nb) s += lam * (base.get(nb) ?? 0)
        }
      }
      if (s > 0) fin.set(d, s)
    }
    const top = new Set([...fin.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10).map((e) => e[0].id))
    sum += q.ev.filter((e) => top.has(e)).length / q.ev.length
    n++
  }
  return 100 * sum / n
}
const A = (c: number) => c % 2 === 0, B = (c: number) => c % 2 === 1
const g2: any[] = []
for (const b of [0, 0.1, 0.25, 0.5]) {
  for (const win of [2, 3]) {
    for (const lam of [0.2, 0.3, 0.4]) g2.push([b, win, lam, run(0.3, b, lam, win, "matched", A)])
  }
}
g2.sort((x, y) => y[3] - x[3])
console.log(g2.slice(0, 6))
const [bb, ww, ll] = g2[0]
console.log("best on A -> B", run(0.3, bb, ll, ww, "matched", B), "all", run(0.3, bb, ll, ww, "matched", () => true))
