/**
 * The scripted extractor the extraction tests share: every "Remember: …" user turn the prompt
 * shows becomes one note, verbatim, resting on that turn; each reply reports fixed usage (120
 * tokens) so budgets and ledgers have something to count. Also the memory settings extraction
 * writes under (global scope, the user-background preset).
 */
import { RoutingPresets } from "@engram/core"
import { ScriptedModel } from "@engram/runtime/testing"

export const memory = {
  scope: "global" as const,
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground
}

export const rememberingExtractor = (request: ScriptedModel.ScriptedRequest): ScriptedModel.Reply => {
  const text = ScriptedModel.userTexts(request).join("\n")
  const memories = [...text.matchAll(/Turn (\d+):\nuser: Remember: (.*)/g)].map((m) => ({
    content: m[2]!,
    kind: "note",
    turns: [Number(m[1])]
  }))
  return [
    ScriptedModel.text(JSON.stringify({ memories })),
    { type: "finish", reason: "stop", usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 } }
  ]
}
