import { describe, expect, it } from "@effect/vitest"
import { Progress } from "@engram/cli"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"

const recorder = (isTTY: boolean) => {
  const chunks: Array<string> = []
  const output: Progress.Output = { isTTY, write: (text) => void chunks.push(text) }
  return { chunks, output }
}

describe("Progress", () => {
  it("renders a bar with counts, percentage, rate and time left", () => {
    expect(Progress.renderBar({ label: "records", done: 1_200, total: 2_500, rate: 400 }, 10)).toBe(
      "records [████░░░░░░] 1,200/2,500  48%  400/s  eta 3s"
    )
    expect(Progress.renderBar({ label: "records", done: 0, total: 0, rate: 0 }, 4)).toBe(
      "records [████] 0/0  100%  0/s"
    )
    expect(Progress.renderLine("engram migrate", { label: "sessions", done: 3, total: 4, rate: 1.6 })).toBe(
      "engram migrate: sessions 3/4 (75%), 2/s"
    )
    expect([45, 185, 7_800].map(Progress.formatDuration)).toEqual(["45s", "3m05s", "2h10m"])
  })

  it.effect("off a terminal: the first line at once, then at most one a second, the last count once", () =>
    Effect.gen(function*() {
      const { chunks, output } = recorder(false)
      const display = yield* Progress.make({ output, prefix: "engram migrate", label: "records", total: 100 })
      yield* TestClock.adjust("100 millis")
      yield* display.update(10)
      yield* TestClock.adjust("300 millis")
      yield* display.update(20)
      yield* TestClock.adjust("800 millis")
      yield* display.update(30)
      yield* display.finish(30)
      yield* display.finish(100)
      expect(chunks).toEqual([
        "engram migrate: records 10/100 (10%), 100/s\n",
        "engram migrate: records 30/100 (30%), 25/s\n"
      ])
      expect(chunks.join("")).not.toContain("\r")
    }))

  it.effect("on a terminal: redraws one line in place and ends it when finished or noted", () =>
    Effect.gen(function*() {
      const { chunks, output } = recorder(true)
      const display = yield* Progress.make({ output, prefix: "engram migrate", label: "records", total: 4 })
      yield* TestClock.adjust("1 second")
      yield* display.update(1)
      yield* display.update(2)
      yield* TestClock.adjust("1 second")
      yield* display.update(3)
      yield* display.note("still going")
      yield* display.finish(4)
      expect(chunks).toEqual([
        "\r\u001b[2Krecords [██████░░░░░░░░░░░░░░░░░░] 1/4  25%  1/s  eta 3s",
        "\r\u001b[2Krecords [██████████████████░░░░░░] 3/4  75%  2/s  eta 1s",
        "\n",
        "engram migrate: still going\n",
        "\r\u001b[2Krecords [████████████████████████] 4/4  100%  2/s",
        "\n"
      ])
    }))
})
