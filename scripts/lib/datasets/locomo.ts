/**
 * LoCoMo (Maharana et al., 2024, "Evaluating Very Long-Term Conversational Memory of LLM Agents";
 * CC BY-NC 4.0): ten conversations between two people over many sessions (5,882 turns, about 9k to
 * 26k tokens each) with questions that name their evidence turns (`D<session>:<turn>`).
 *
 * Not part of this repository. Get it from the GitHub repository `snap-research/locomo`: either
 * `data/locomo10.json`, or `data/locomo10.zip` unpacked (one JSON file per conversation); this
 * reads both shapes. Questions of categories 1-4 with at least one existing evidence turn are
 * kept; category 5 (adversarial, no evidence) is left out. A shared photo's caption is part of
 * the turn's text (`[shares <caption>]`), as a chat log would show it.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { Dataset, Question, Turn } from "./Dataset.js"

type Sample = {
  readonly name: string
  readonly conversation: Record<string, unknown>
  readonly qa: ReadonlyArray<Record<string, unknown>>
}

const idOf = (conversation: string, diaId: string) => `locomo-${conversation}-${diaId.replace(":", "-")}`

const samplesOf = (path: string): Array<Sample> => {
  const files = NodeFs.statSync(path).isDirectory()
    ? NodeFs.readdirSync(path).filter((f) => f.endsWith(".json")).sort().map((f) => NodePath.join(path, f))
    : [path]
  const samples: Array<Sample> = []
  for (const file of files) {
    const data = JSON.parse(NodeFs.readFileSync(file, "utf8")) as unknown
    if (Array.isArray(data)) {
      data.forEach((sample: Record<string, unknown>, i) =>
        samples.push({
          name: String(sample.sample_id ?? i).replace(/[^A-Za-z0-9]/g, ""),
          conversation: sample.conversation as Record<string, unknown>,
          qa: sample.qa as ReadonlyArray<Record<string, unknown>>
        })
      )
    } else {
      const sample = data as Record<string, unknown>
      samples.push({
        name: NodePath.basename(file, ".json").replace(/[^A-Za-z0-9]/g, ""),
        conversation: sample,
        qa: sample.qa as ReadonlyArray<Record<string, unknown>>
      })
    }
  }
  return samples
}

/** Reads LoCoMo from `path`: `locomo10.json`, or a directory of per-conversation JSON files. */
export const load = (path: string): Dataset => {
  const turns: Array<Turn> = []
  const questions: Array<Question> = []
  for (const { conversation, name, qa } of samplesOf(path)) {
    const scope = `project:locomo-${name}`
    const known = new Set<string>()
    for (const [key, value] of Object.entries(conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue
      const thread = `locomo-${name}-${key}`
      for (const [position, turn] of (value as ReadonlyArray<Record<string, unknown>>).entries()) {
        const caption = typeof turn.blip_caption === "string" ? ` [shares ${turn.blip_caption}]` : ""
        const id = idOf(name, String(turn.dia_id))
        known.add(id)
        turns.push({
          id,
          speaker: String(turn.speaker),
          text: `${String(turn.text)}${caption}`,
          scope,
          thread,
          turn: position
        })
      }
    }
    qa.forEach((q, i) => {
      if (Number(q.category) === 5) return
      const evidence = [...new Set(JSON.stringify(q.evidence ?? []).match(/D\d+:\d+/g) ?? [])]
        .map((d) => idOf(name, d))
        .filter((id) => known.has(id))
      if (evidence.length > 0) {
        questions.push({ id: `${scope}#${i}`, text: String(q.question), scope, evidence, category: String(q.category) })
      }
    })
  }
  return {
    name: "locomo",
    family: "locomo",
    source: "LoCoMo (snap-research/locomo, CC BY-NC 4.0)",
    turns,
    questions
  }
}
