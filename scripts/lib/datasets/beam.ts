/**
 * BEAM (Tavakoli et al., 2025, "Beyond a Million Tokens: Benchmarking and Enhancing Long-Term
 * Memory in LLMs"; data CC BY-SA 4.0, code MIT): long user-assistant conversations generated at
 * several scales, each with probing questions of ten memory abilities whose `source_chat_ids` name
 * the messages that hold the answer. This reads the 128K scale (20 conversations, about 128k
 * tokens each) and the 500K scale (35 conversations, about 500k tokens each).
 *
 * Not part of this repository. Get the `chats/` directory of the GitHub repository
 * `mohammadtavakoli78/BEAM` (`chats/100K/<n>/chat.json` and `probing_questions/probing_questions.json`,
 * likewise `chats/500K/`) and pass the directory that holds `100K` and `500K`. Where a conversation
 * has a `chat_trunecated.json` (sic), that is the one the benchmark's 128K scale uses, so it is read
 * instead of `chat.json`.
 *
 * Each message is a turn said by `user` or `assistant`; a batch of the conversation (the generator's
 * session, with its own time anchor) is a thread. The generator's bookkeeping marks at the end of
 * user messages (`->-> 3,2`) are removed: no person writes them. Abstention questions name no
 * evidence and are left out, as is any question whose evidence names no existing message.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { Dataset, Question, Turn } from "./Dataset.js"

/** The scales this loader reads, by the name of their directory in BEAM's `chats/`. */
export const SCALES = { "beam-128k": "100K", "beam-500k": "500K" } as const
export type Scale = keyof typeof SCALES

type Message = { readonly id: number; readonly role: string; readonly content: string }

const MARK = /\s*->->\s*\d+\s*,\s*\d+\s*$/

/** Every integer under `value` (a list, or an object of lists, of message ids). */
const ids = (value: unknown): Array<number> =>
  Array.isArray(value)
    ? value.flatMap(ids)
    : typeof value === "object" && value !== null
    ? Object.values(value).flatMap(ids)
    : typeof value === "number" && Number.isInteger(value)
    ? [value]
    : []

/** Reads one scale of BEAM from `chats`, the directory holding `100K` and `500K`. */
export const load = (chats: string, scale: Scale): Dataset => {
  const directory = NodePath.join(chats, SCALES[scale])
  const conversations = NodeFs.readdirSync(directory)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(a) - Number(b))
  const turns: Array<Turn> = []
  const questions: Array<Question> = []
  for (const conversation of conversations) {
    const folder = NodePath.join(directory, conversation)
    const truncated = NodePath.join(folder, "chat_trunecated.json")
    const chatFile = NodeFs.existsSync(truncated) ? truncated : NodePath.join(folder, "chat.json")
    const batches = JSON.parse(NodeFs.readFileSync(chatFile, "utf8")) as ReadonlyArray<{
      readonly batch_number: number
      readonly turns: ReadonlyArray<ReadonlyArray<Message>>
    }>
    const scope = `project:${scale}-${conversation}`
    const idOf = (message: number) => `${scale}-${conversation}-${message}`
    const known = new Set<string>()
    for (const batch of batches) {
      const thread = `${scale}-${conversation}-batch-${batch.batch_number}`
      batch.turns.flat().forEach((message, position) => {
        const id = idOf(message.id)
        known.add(id)
        turns.push({
          id,
          speaker: message.role,
          text: message.content.replace(MARK, ""),
          scope,
          thread,
          turn: position
        })
      })
    }
    const probing = JSON.parse(
      NodeFs.readFileSync(NodePath.join(folder, "probing_questions", "probing_questions.json"), "utf8")
    ) as Record<string, ReadonlyArray<Record<string, unknown>>>
    for (const [ability, list] of Object.entries(probing)) {
      list.forEach((q, i) => {
        const evidence = [...new Set(ids(q.source_chat_ids).map(idOf))].filter((id) => known.has(id))
        if (evidence.length > 0 && typeof q.question === "string") {
          questions.push({ id: `${scope}#${ability}-${i}`, text: q.question, scope, evidence, category: ability })
        }
      })
    }
  }
  return {
    name: scale,
    family: "beam",
    source: `BEAM ${SCALES[scale]} (mohammadtavakoli78/BEAM, data CC BY-SA 4.0)`,
    turns,
    questions
  }
}
