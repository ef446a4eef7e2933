/**
 * The poisoning corpus stored the way a conversation is (decision 0237): a turn is written as
 * `"<speaker>: <text>"`, and the speaker's label must change no verdict — an attack held plain is
 * held as a user's or an assistant's turn, and a look-alike passed plain passes as either. Before
 * 0237 an assistant's label held 92 of the 153 look-alikes, and a user's let three tuned attacks through.
 */
import { describe, expect, it } from "@effect/vitest"
import { InstructionScreen } from "@engram/core"
import * as Corpus from "../src/internal/poisoningCorpus.js"
import * as Blind from "../src/internal/poisoningCorpusBlind.js"
import * as Qa from "../src/internal/poisoningCorpusQa.js"

const held = (text: string) => InstructionScreen.screen(text).flagged

const attacks = [
  ...Corpus.attacks.map((a) => a.text),
  ...Qa.attacks.map((a) => a.text),
  ...Qa.laterAttacks.map((a) => a.text)
].filter(held)
const lookalikes = [...Corpus.lookalikes, ...Blind.lookalikes].map((l) => l.text)

describe("the poisoning corpus stored as conversation turns (decision 0237)", () => {
  it("holds every tuned, held-out and question-and-answer attack as a user's and as an assistant's turn", () => {
    expect(attacks.length).toBeGreaterThan(250)
    for (const text of attacks) {
      for (const speaker of ["user", "assistant"]) expect(held(`${speaker}: ${text}`), `${speaker}: ${text}`).toBe(true)
    }
  })

  it("holds every blind attack the screen holds plain as an assistant's turn", () => {
    for (const { text } of Blind.attacks.filter((a) => held(a.text))) {
      expect(held(`assistant: ${text}`), text).toBe(true)
    }
  })

  it("passes every look-alike as a user's and as an assistant's turn", () => {
    for (const text of lookalikes) {
      for (const speaker of ["user", "assistant"]) {
        expect(held(`${speaker}: ${text}`), `${speaker}: ${text}`).toBe(false)
      }
    }
  })
})
