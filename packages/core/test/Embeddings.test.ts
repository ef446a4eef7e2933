import { describe, expect, it } from "@effect/vitest"
import { Embeddings } from "@engram/core"

describe("Embeddings.queryText (decision 0220)", () => {
  it("takes an English question's opening interrogative and question mark off, and leaves other text alone", () => {
    expect(Embeddings.queryText("When did Caroline go to the LGBTQ support group?")).toBe(
      "Caroline go to the LGBTQ support group"
    )
    expect(Embeddings.queryText("How many times has Melanie gone to the beach?")).toBe(
      "times has Melanie gone to the beach"
    )
    expect(Embeddings.queryText("What book did Melanie read?")).toBe("book did Melanie read")
    expect(Embeddings.queryText("postgres setup")).toBe("postgres setup")
    expect(Embeddings.queryText("Whatever happened to the deploy")).toBe("Whatever happened to the deploy")
    expect(Embeddings.queryText("Wo ist der Bahnhof?")).toBe("Wo ist der Bahnhof")
    expect(Embeddings.queryText("Why ?")).toBe("Why ?")
  })
})
