import { describe, expect, it } from "@effect/vitest"
import { MemoryRecord, StatedTime } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as fc from "effect/FastCheck"

const SAID = DateTime.unsafeMake("2026-01-15T12:00:00Z")
const ordinal = (d: number): string =>
  d % 10 === 1 && d !== 11 ? "st" : d % 10 === 2 && d !== 12 ? "nd" : d % 10 === 3 && d !== 13 ? "rd" : "th"

const read = (text: string, said: DateTime.Utc = SAID): string | undefined => {
  const found = StatedTime.validFromIn(text, said)
  return found === undefined ? undefined : DateTime.formatIso(found)
}

const MONTHS = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December"
] as const

describe("StatedTime.validFromIn", () => {
  it("reads an absolute date after a start marker, in common English forms, at UTC midnight", () => {
    expect(read("Since March 2025 the user lives on Oak Avenue")).toBe("2025-03-01T00:00:00.000Z")
    expect(read("I moved on 2024-05-03")).toBe("2024-05-03T00:00:00.000Z")
    expect(read("As of May 3, 2024 my address is Oak Avenue")).toBe("2024-05-03T00:00:00.000Z")
    expect(read("From 3 May 2024 my name is Douglas")).toBe("2024-05-03T00:00:00.000Z")
    expect(read("Starting 1 December 2025, the standup is at 10am")).toBe("2025-12-01T00:00:00.000Z")
    expect(read("The user works at Acme since 2023")).toBe("2023-01-01T00:00:00.000Z")
    expect(read("The user moved to Oslo in June 2024")).toBe("2024-06-01T00:00:00.000Z")
  })

  it("reads a date without a year, or a relative one, against when it was said", () => {
    expect(read("Since the 3rd of May the user cycles to work")).toBe("2025-05-03T00:00:00.000Z")
    expect(read("since last March my team is Platform")).toBe("2025-03-01T00:00:00.000Z")
    expect(read("The user moved two weeks ago")).toBe("2026-01-01T00:00:00.000Z")
    expect(read("Since yesterday the office is in Bergen")).toBe("2026-01-14T00:00:00.000Z")
    expect(read("Last spring the user moved to Oak Avenue")).toBe("2025-03-01T00:00:00.000Z")
    expect(read("Last spring the user moved", DateTime.unsafeMake("2026-07-10T00:00:00Z"))).toBe(
      "2026-03-01T00:00:00.000Z"
    )
    expect(read("Last spring the user moved", DateTime.unsafeMake("2026-04-10T00:00:00Z"))).toBe(
      "2025-03-01T00:00:00.000Z"
    )
    expect(read("In the summer of 2024 the user started running")).toBe("2024-06-01T00:00:00.000Z")
  })

  it("takes no date that is the value, a time of day, or one after it was said", () => {
    expect(read("My birthday is March 3")).toBeUndefined()
    expect(read("The deploy day is Tuesday")).toBeUndefined()
    expect(read("The team standup is at 10am")).toBeUndefined()
    expect(read("The flight is on 2024-05-03")).toBeUndefined()
    expect(read("Starting next Monday the standup is at 10")).toBeUndefined()
    expect(read("Since 2027 the user lives in Oslo")).toBeUndefined()
    expect(read("The user's name is Doug")).toBeUndefined()
  })

  it.prop(
    "a past day after 'since', in any of four forms, is that day at UTC midnight",
    {
      day: fc.date({
        min: new Date("1990-01-01T00:00:00Z"),
        max: new Date("2026-01-14T00:00:00Z"),
        noInvalidDate: true
      }),
      form: fc.integer({ min: 0, max: 3 }),
      marker: fc.constantFrom("Since", "As of", "Starting", "From")
    },
    ({ day, form, marker }) => {
      const y = day.getUTCFullYear()
      const m = day.getUTCMonth()
      const d = day.getUTCDate()
      const text = [
        `${y}-${String(m + 1).padStart(2, "0")}-${String(d).padStart(2, "0")}`,
        `${MONTHS[m]} ${d}, ${y}`,
        `${d} ${MONTHS[m]} ${y}`,
        `the ${d}${ordinal(d)} of ${MONTHS[m]} ${y}`
      ][form]!
      expect(read(`${marker} ${text} the user lives in Oslo`)).toBe(new Date(Date.UTC(y, m, d)).toISOString())
    }
  )

  it.prop(
    "is never after the moment the text was said",
    { text: fc.string({ maxLength: 80 }), said: fc.integer({ min: 0, max: 4_000_000_000_000 }) },
    ({ said, text }) => {
      const found = StatedTime.validFromIn(text, DateTime.unsafeMake(said))
      return found === undefined || DateTime.toEpochMillis(found) <= said
    }
  )

  it.prop(
    "a sentence whose date is its value states no start",
    {
      subject: fc.constantFrom("The deploy day", "My birthday", "The flight", "The release", "The dentist appointment"),
      value: fc.oneof(
        fc.constantFrom("Monday", "Tuesday", "Friday", "tomorrow", "next week"),
        fc.tuple(fc.constantFrom(...MONTHS), fc.integer({ min: 1, max: 28 })).map(([m, d]) => `${m} ${d}`)
      )
    },
    ({ subject, value }) => read(`${subject} is ${value}`) === undefined
  )
})

const readTo = (text: string, said: DateTime.Utc = SAID): string | undefined => {
  const found = StatedTime.validToIn(text, said)
  return found === undefined ? undefined : DateTime.formatIso(found)
}

describe("StatedTime.validToIn", () => {
  it("reads an end after 'until' as the start of the period it names, after 'through' as the start of the next", () => {
    // SAID is Thursday 2026-01-15.
    expect(readTo("The office is closed until Monday")).toBe("2026-01-19T00:00:00.000Z")
    expect(readTo("The user is in Oslo till the end of March")).toBe("2026-04-01T00:00:00.000Z")
    expect(readTo("The user is on leave through 2026-01-20")).toBe("2026-01-21T00:00:00.000Z")
    expect(readTo("The user is on leave until 2026-01-20")).toBe("2026-01-20T00:00:00.000Z")
    // Read alone, chrono takes "lasts until March" for "last s…": the words after the marker are read.
    expect(readTo("The freeze lasts until March")).toBe("2026-03-01T00:00:00.000Z")
    expect(readTo("The freeze lasts through March")).toBe("2026-04-01T00:00:00.000Z")
    expect(readTo("The user works at Acme until 2027")).toBe("2027-01-01T00:00:00.000Z")
    expect(readTo("The user works at Acme through 2026")).toBe("2027-01-01T00:00:00.000Z")
    expect(readTo("From March to May 2026 the user lives in Oslo")).toBe("2026-06-01T00:00:00.000Z")
    expect(readTo("The lease ends on 2026-08-31")).toBe("2026-08-31T00:00:00.000Z")
    expect(readTo("The trial expires in March")).toBe("2026-03-01T00:00:00.000Z")
  })

  it("reads a date without a year as the next one, and keeps a past end only when its year is written", () => {
    // The 3rd of January, said on the 15th, is next January's.
    expect(readTo("The user is away until the 3rd of January")).toBe("2027-01-03T00:00:00.000Z")
    expect(readTo("Until 2024-05-03 the user lived in Oslo")).toBe("2024-05-03T00:00:00.000Z")
    expect(readTo("The user lived in Oslo until 2019")).toBe("2019-01-01T00:00:00.000Z")
    expect(readTo("The user was away until yesterday")).toBeUndefined()
  })

  it("takes no date that is not after an end marker, nor a time of day", () => {
    expect(readTo("Since March 2025 the user lives on Oak Avenue")).toBeUndefined()
    expect(readTo("The deploy day is Tuesday")).toBeUndefined()
    expect(readTo("The office is open until 5pm")).toBeUndefined()
    expect(readTo("My birthday is March 3")).toBeUndefined()
  })

  it.prop(
    "a day after 'until' or 'through', in any of three forms, ends that day's start or the next day's",
    {
      day: fc.date({
        min: new Date("1990-01-01T00:00:00Z"),
        max: new Date("2040-12-31T00:00:00Z"),
        noInvalidDate: true
      }),
      form: fc.integer({ min: 0, max: 2 }),
      marker: fc.constantFrom("until", "till", "through")
    },
    ({ day, form, marker }) => {
      const y = day.getUTCFullYear()
      const m = day.getUTCMonth()
      const d = day.getUTCDate()
      const text = [
        `${y}-${String(m + 1).padStart(2, "0")}-${String(d).padStart(2, "0")}`,
        `${MONTHS[m]} ${d}, ${y}`,
        `${d} ${MONTHS[m]} ${y}`
      ][form]!
      const end = Date.UTC(y, m, d) + (marker === "through" ? 86_400_000 : 0)
      expect(readTo(`The user lives in Oslo ${marker} ${text}`)).toBe(new Date(end).toISOString())
    }
  )

  it.prop(
    "an end without a written year is after the moment it was said",
    {
      said: fc.integer({ min: 0, max: 4_000_000_000_000 }),
      end: fc.constantFrom(
        "Monday",
        "Friday",
        "March",
        "the 3rd of May",
        "the end of the month",
        "next week",
        "tomorrow"
      )
    },
    ({ end, said }) => {
      const found = StatedTime.validToIn(`The office is closed until ${end}`, DateTime.unsafeMake(said))
      return found !== undefined && DateTime.toEpochMillis(found) > said
    }
  )
})

describe("StatedTime.boundsIn", () => {
  it("gives the stated start, else the default, and the stated end", () => {
    const bounds = StatedTime.boundsIn("The office is closed until Monday", SAID, SAID)
    expect(bounds.validFrom).toEqual(SAID)
    expect(bounds.validTo && DateTime.formatIso(bounds.validTo)).toBe("2026-01-19T00:00:00.000Z")
    // A past end with no stated start: the time it was said would come after it, so the start is open.
    const past = StatedTime.boundsIn("Until 2024-05-03 the user lived in Oslo", SAID, SAID)
    expect(past.validFrom).toBeUndefined()
    expect(past.validTo && DateTime.formatIso(past.validTo)).toBe("2024-05-03T00:00:00.000Z")
    const both = StatedTime.boundsIn("From March 2025 until 2025-06-10 the user lived in Bergen", SAID, SAID)
    expect([both.validFrom, both.validTo].map((b) => b && DateTime.formatIso(b))).toEqual([
      "2025-03-01T00:00:00.000Z",
      "2025-06-10T00:00:00.000Z"
    ])
  })

  it.prop(
    "validFrom is always before validTo, so a record takes them (MemoryRecord.validityProblem)",
    {
      start: fc.constantFrom("", "Since March 2025 ", "From 2026-02-01 ", "Since 2030 ", "Two weeks ago "),
      middle: fc.string({ maxLength: 30 }),
      end: fc.constantFrom(
        "",
        " until Monday",
        " through 2024",
        " until 2026-01-01",
        " till the end of March",
        " until 2025"
      ),
      said: fc.integer({ min: 0, max: 4_000_000_000_000 }),
      offset: fc.integer({ min: -100_000_000_000, max: 100_000_000_000 })
    },
    ({ end, middle, offset, said, start }) => {
      const bounds = StatedTime.boundsIn(
        `${start}${middle}${end}`,
        DateTime.unsafeMake(said),
        DateTime.unsafeMake(Math.max(0, said + offset))
      )
      return MemoryRecord.validityProblem(bounds.validFrom, bounds.validTo) === undefined
    }
  )
})
