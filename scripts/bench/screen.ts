/**
 * `npm run bench -- screen [--locomo PATH] [--beam DIR] [--datasets LIST] [--samples N] [--rule NAME]`
 * — the poisoning screen (`InstructionScreen`) on ordinary conversations and on the attack corpora
 * (decision 0237).
 *
 * Every turn of LoCoMo and BEAM, user and assistant, is screened as it is stored (`"<speaker>:
 * <text>"`, `Dataset.contentOf`). These are ordinary conversations: a flag there is a false positive
 * unless the text really addresses an AI to override it or get data out (read the samples). Each
 * dataset is reported in two parts: the part the rules were tuned on (BEAM 128K; LoCoMo's even
 * conversations) and the held-out part (BEAM 500K; LoCoMo's odd conversations). For each part: the
 * share of turns held, by speaker, by reason (`ScreenReason`) and by the rule that fired (read on the
 * plain text; a turn held only through a decoded, ROT13, reversed or leetspeak view counts as
 * `(view)`), and `--samples N` held turns per rule around the words the rule matched.
 *
 * Then the attack corpora of the `poisoning-screen*` eval families (`packages/harness`): the share
 * of attacks held per half and style, and of benign look-alikes held.
 */
import { InstructionScreen } from "@engram/core"
import { rulesFiring } from "../../packages/core/src/internal/screenRules.js"
import { fold } from "../../packages/core/src/internal/screenText.js"
import * as Corpus from "../../packages/harness/src/internal/poisoningCorpus.js"
import * as Blind from "../../packages/harness/src/internal/poisoningCorpusBlind.js"
import * as Qa from "../../packages/harness/src/internal/poisoningCorpusQa.js"
import { fmt, machine, option, table } from "../lib/benchKit.js"
import * as Datasets from "../lib/datasets/index.js"

const share = (part: number, whole: number) => `${fmt((100 * part) / Math.max(1, whole), 1)}%`

/** The part of a dataset a turn belongs to: tuned on, or held out. */
const partOf = (dataset: Datasets.Dataset, scopes: ReadonlyArray<string>, turn: Datasets.Turn): "tune" | "held-out" =>
  dataset.name === "beam-128k"
    ? "tune"
    : dataset.name === "beam-500k"
    ? "held-out"
    : scopes.indexOf(turn.scope) % 2 === 0
    ? "tune"
    : "held-out"

interface Tally {
  turns: number
  held: number
  bySpeaker: Map<string, { turns: number; held: number }>
  byReason: Map<string, number>
  byRule: Map<string, number>
  samples: Map<string, Array<string>>
}

const tally = (): Tally => ({
  turns: 0,
  held: 0,
  bySpeaker: new Map(),
  byReason: new Map(),
  byRule: new Map(),
  samples: new Map()
})

const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1)

/** The text around the words a rule matched, on one line. */
const around = (text: string, words: string): string => {
  const flat = text.replace(/\s+/g, " ")
  const first = words.split(" ")[0] ?? ""
  const at = Math.max(0, fold(flat).indexOf(first))
  const from = Math.max(0, at - 100)
  return `${from > 0 ? "…" : ""}${flat.slice(from, at + 200)}${at + 200 < flat.length ? "…" : ""}`
}

const screenTurns = (dataset: Datasets.Dataset, samples: number, only: string | undefined) => {
  const scopes = [...new Set(dataset.turns.map((turn) => turn.scope))]
  const parts = new Map<string, Tally>()
  for (const turn of dataset.turns) {
    const part = partOf(dataset, scopes, turn)
    const t = parts.get(part) ?? tally()
    parts.set(part, t)
    const content = Datasets.contentOf(turn)
    const verdict = InstructionScreen.screen(content)
    t.turns++
    const speaker = t.bySpeaker.get(turn.speaker) ?? { turns: 0, held: 0 }
    t.bySpeaker.set(turn.speaker, { turns: speaker.turns + 1, held: speaker.held + (verdict.flagged ? 1 : 0) })
    if (!verdict.flagged) continue
    t.held++
    for (const reason of verdict.reasons) bump(t.byReason, reason)
    const fired = rulesFiring(fold(content))
    if (fired.length === 0) bump(t.byRule, "(view)")
    for (const { rule, words } of fired) {
      bump(t.byRule, rule)
      const list = t.samples.get(rule) ?? []
      t.samples.set(rule, list)
      if (list.length < samples && (only === undefined || only === rule)) {
        list.push(`${turn.id} [${words}] ${around(content, words)}`)
      }
    }
  }
  return parts
}

const report = (name: string, part: string, t: Tally) => {
  console.log(`\n## ${name} — ${part}: ${t.held} of ${t.turns} turns held (${share(t.held, t.turns)})`)
  console.log(
    [...t.bySpeaker].map(([speaker, s]) => `${speaker} ${s.held}/${s.turns} (${share(s.held, s.turns)})`).join(
      " · "
    )
  )
  const sorted = (map: Map<string, number>) => [...map].sort((a, b) => b[1] - a[1])
  console.log(
    table(["reason", "turns", "share"], sorted(t.byReason).map(([k, v]) => [k, String(v), share(v, t.turns)]))
  )
  console.log(table(["rule", "turns", "share"], sorted(t.byRule).map(([k, v]) => [k, String(v), share(v, t.turns)])))
  for (const [rule, list] of t.samples) {
    if (list.length === 0) continue
    console.log(`\n### ${rule}`)
    for (const line of list) console.log(`- ${line}`)
  }
}

/** The attack corpora of the eval families: held share of attacks by half and style, and of look-alikes. */
const corpora = () => {
  const held = (text: string) => InstructionScreen.screen(text).flagged
  const rows: Array<Array<string>> = []
  const groups = new Map<string, { held: number; total: number }>()
  const add = (key: string, text: string) => {
    const g = groups.get(key) ?? { held: 0, total: 0 }
    groups.set(key, { held: g.held + (held(text) ? 1 : 0), total: g.total + 1 })
  }
  for (const a of [...Corpus.attacks, ...Blind.attacks]) add(`attacks ${a.half}`, a.text)
  for (const a of Qa.attacks) add("attacks qa", a.text)
  for (const a of Qa.laterAttacks) add("attacks qa-later", a.text)
  // The same payloads stored as a conversation turn is ("<speaker>: <text>"): the label changes no verdict.
  for (const speaker of ["user", "assistant"]) {
    for (const a of [...Corpus.attacks, ...Blind.attacks]) add(`attacks as ${speaker} turns`, `${speaker}: ${a.text}`)
    for (const l of [...Corpus.lookalikes, ...Blind.lookalikes]) {
      add(`look-alikes as ${speaker} turns`, `${speaker}: ${l.text}`)
    }
  }
  for (const l of [...Corpus.lookalikes, ...Blind.lookalikes]) add(`look-alikes ${l.half}`, l.text)
  for (const l of Qa.lookalikes) add("look-alikes qa", l)
  for (const l of Qa.laterLookalikes) add("look-alikes qa-later", l)
  let attacks = { held: 0, total: 0 }
  for (const [key, g] of groups) {
    rows.push([key, `${g.held}/${g.total}`, share(g.held, g.total)])
    if (key.startsWith("attacks")) attacks = { held: attacks.held + g.held, total: attacks.total + g.total }
  }
  rows.push(["attacks, all", `${attacks.held}/${attacks.total}`, share(attacks.held, attacks.total)])
  console.log("\n## Attack corpora (packages/harness poisoning-screen* families)")
  console.log(table(["corpus", "held", "share"], rows))
  const missed = [...Corpus.attacks, ...Blind.attacks].filter((a) => !held(a.text))
  for (const a of missed) console.log(`- missed ${a.half} ${a.style}: ${JSON.stringify(a.text.slice(0, 120))}`)
}

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  if (args.includes("--help")) {
    console.log(
      `npm run bench -- screen [--samples 5] [--rule NAME] [--no-datasets]\n${Datasets.USAGE}`
    )
    return
  }
  const samples = Number(option(args, "--samples") ?? "5")
  const only = option(args, "--rule")
  console.log(`# Poisoning screen on ordinary conversations and attack corpora (${machine()})`)
  const started = performance.now()
  if (!args.includes("--no-datasets")) {
    for (const dataset of Datasets.fromArgs(args)) {
      const parts = screenTurns(dataset, samples, only)
      for (const part of ["tune", "held-out"]) {
        const t = parts.get(part)
        if (t !== undefined) report(dataset.name, part, t)
      }
    }
  }
  corpora()
  console.log(`\n(${fmt((performance.now() - started) / 1000, 1)} s; ${machine()})`)
}
