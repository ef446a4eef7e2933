import { describe, expect, it } from "@effect/vitest"
import { RoutingPresets, Slot } from "@engram/core"
import * as fc from "fast-check"

const spec = RoutingPresets.userBackground
const slot = (content: string, label?: string) =>
  Slot.slotOf(spec, { content, ...(label !== undefined ? { label } : {}) })?.key

describe("Slot.slotOf", () => {
  it("a correction under another label, or none, is in the name slot", () => {
    const held = slot("The user's name is Doug.", "name")
    expect(held).toBe("about_user/name")
    expect(slot("Actually, my name is Douglas, not Doug.", "preferred-name")).toBe(held)
    expect(slot("My name's Douglas")).toBe(held)
    expect(slot("Douglas", "first_name")).toBe(held)
  })

  it("name, surname and preferred name are three slots", () => {
    const keys = [
      slot("My name is Douglas"),
      slot("My surname is Adams"),
      slot("Call me Doug"),
      slot("Adams", "last name")
    ]
    expect(keys).toEqual(["about_user/name", "about_user/surname", "about_user/preferred_name", "about_user/surname"])
  })

  it("content patterns give subject-attribute slots whatever the wording", () => {
    const standup = slot("The team standup is at 9am")
    expect(standup).toBe("~standup")
    expect(slot("Our standup moved to 10am")).toBe(standup)
    expect(slot("Update: the standup is now at 9:30")).toBe(standup)
    const deploy = slot("Atlas's deploy day is Tuesday")
    expect(deploy).toBe("~atlas_deploy_day")
    expect(slot("The deploy day for Atlas is Thursday")).toBe(deploy)
    expect(slot("Standup at 9am", "standup")).toBe(standup)
  })

  it("distinct facts are distinct slots; statements with no attribute state none", () => {
    expect(slot("My dog's name is Rex")).not.toBe(slot("My cat's name is Tom"))
    expect(slot("My dog's name is Rex")).not.toBe("about_user/name")
    expect(slot("The user prefers dark mode")).toBeUndefined()
    expect(slot("It is raining")).toBeUndefined()
    expect(slot("The user is a vegetarian")).toBeUndefined()
    expect(slot("Her name is Anna")).not.toBe("about_user/name")
  })
})

describe("Slot.restates", () => {
  it("same values restate; a changed or added value does not", () => {
    expect(Slot.restates("Like I said, my name is Doug", "The user's name is Doug.")).toBe(true)
    expect(Slot.restates("My name is Doug", "Doug")).toBe(true)
    expect(Slot.restates("The standup happens at 9 am", "The team standup is at 9am")).toBe(true)
    expect(Slot.restates("Actually, my name is Douglas, not Doug.", "The user's name is Doug.")).toBe(false)
    expect(Slot.restates("Our standup moved to 10am", "The team standup is at 9am")).toBe(false)
    expect(Slot.restates("the user prefers dark mode", "the user prefers light mode")).toBe(false)
  })

  it("a text with a different number or name never restates (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 12 }), (a, b) => {
        const restated = Slot.restates(`The standup is at ${a}am`, `Our standup is at ${b}am`)
        return restated === (a === b)
      })
    )
  })

  it("slots ignore discourse openers and determiners (property)", () => {
    const openers = fc.constantFrom("", "Actually, ", "Update: ", "FYI ", "As I said, ")
    const determiners = fc.constantFrom("The", "Our", "My", "The team")
    fc.assert(
      fc.property(
        openers,
        determiners,
        fc.constantFrom("is", "moved to", "changed to", "is now"),
        (o, d, v) => slot(`${o}${d} standup ${v} 10am`) === "~standup"
      )
    )
  })
})
