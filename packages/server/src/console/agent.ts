/**
 * The agent view: the stable prefix the agent composes now, each memory fragment a link to its
 * record; and the overlay report with each record's content and reason, grouped by outcome, every
 * row that an operator can fix offering its fix.
 */
import type * as Answers from "./answers.js"
import { api, messageOf, writable } from "./client.js"
import { type Child, el, form, link } from "./dom.js"
import type { Go } from "./router.js"
import { announce, idText, memoryHref, orShow, pill, scopeField, scopes, shortId } from "./widgets.js"

/** How an operator can act on a decline from this view. */
type FixKind = "confirm" | "decide" | "holder" | "open"

/** What each decline reason means, and whether an operator can fix it from here. */
const REASONS: { readonly [R in Answers.DeclineReason]?: readonly [meaning: string, fix: FixKind | null] } = {
  "review-required": ["The section is guarded: it composes only confirmed memories.", "confirm"],
  "flagged": ["The poisoning screen flags its text as an instruction: read it, then confirm or reject.", "decide"],
  "shadowed": ["Another record holds this address.", "holder"],
  "on-demand": ["Its delivery policy is on_demand: it reaches a model only through memory_recall.", "open"],
  "spec-declined": ["The routing spec places no Background entry for it: it reaches prompts through recall.", null],
  "rejected": ["Rejected by a review.", null],
  "superseded": ["Replaced by an edit.", null],
  "expired": ["Expired.", null],
  "over-budget": ["The Background's character budget was full: raise it in the agent config.", null],
  "authored-wins": ["An authored entry holds this key.", null],
  "duplicate-row": ["A second promotion row for the record.", null],
  "spec-mismatch": ["Its row was written by another routing spec.", null],
  "undeclared-section": ["The section is not declared.", null],
  "locked": ["The section is locked: it takes no memory.", null],
  "earned-inert": ["Earned promotion is inert in this version.", null]
}

/** A group of the report: every composed row, or the rows declined for one reason. */
type GroupKey = "composed" | Answers.DeclineReason

const reasonOf = (key: string) => REASONS[key as Answers.DeclineReason]

/** `#/agent?scope=`: the composed prefix and the overlay report, with the fixes an operator can make. */
export const agentView = async (main: HTMLElement, params: URLSearchParams, go: Go): Promise<void> => {
  const scope = params.get("scope") || scopes()[0]!
  const picker = form(
    { class: "inline" },
    (data) => go("#/agent?scope=" + encodeURIComponent(String(data.get("scope")))),
    scopeField(scope, "scope", false),
    el("button", { class: "primary", type: "submit", text: "Compose" })
  )
  main.append(el("h1", { tabindex: "-1", text: "Agent" }), picker)
  const agent = await orShow(main, api.agent(scope))
  if (agent === undefined) return
  const records = new Map(agent.records.map((r) => [r.id, r]))
  const prefix = el("div", { class: "prefix", "data-testid": "prefix" })
  if (agent.prefix.length === 0) {
    prefix.append(el("span", { class: "empty", text: "The prefix is empty: nothing authored, nothing composed." }))
  }
  for (const section of agent.prefix) {
    prefix.append(el(
      "div",
      { "data-section": section.name },
      section.fragments.map((f) =>
        f.source === "memory"
          ? el("a", {
            class: "chip memory",
            href: memoryHref(f.memoryIds[0]!),
            "data-source": "memory",
            "data-ids": f.memoryIds.join(" "),
            title: "memory " + f.memoryIds.join(", "),
            text: f.text
          })
          : el("span", { class: "chip authored", "data-source": "authored", title: "authored", text: f.text })
      )
    ))
  }
  const outcomes = (agent.report && agent.report.outcomes) || []
  const groups = new Map<GroupKey, Array<Answers.OverlayOutcome>>()
  for (const o of outcomes) {
    const key: GroupKey = o.status === "composed" ? "composed" : o.reason
    if (!groups.has(key)) groups.set(key, [])
    groups.get(key)!.push(o)
  }
  const rank = (key: GroupKey) => key === "composed" ? 1 : reasonOf(key)?.[1] ? 0 : 2
  const order = [...groups.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
  const fixOf = (o: Answers.OverlayOutcome, record: Answers.MemoryRecordJson | undefined): Child => {
    if (o.status !== "declined") return null
    const kind = reasonOf(o.reason)?.[1] ?? null
    const review = (to: Answers.ReviewState, text: string, cls: string) =>
      el("button", {
        type: "button",
        class: cls,
        "data-testid": "fix-" + to,
        text,
        onclick: async () => {
          try {
            await api.review(o.recordId, { state: to })
            announce((to === "confirmed" ? "Confirmed " : "Rejected ") + o.recordId)
            go("#/agent?scope=" + encodeURIComponent(scope), true)
          } catch (e) {
            announce(messageOf(e), "error")
          }
        }
      })
    if (kind === "confirm" && writable() && record) return review("confirmed", "Confirm", "primary")
    if (kind === "decide" && writable() && record) {
      return [review("confirmed", "Confirm", "primary"), " ", review("rejected", "Reject", "")]
    }
    if (kind === "holder" && o.heldBy) return link(memoryHref(o.heldBy), "Open the holder " + idText(o.heldBy))
    if (kind === "open" && record) return link(memoryHref(o.recordId), writable() ? "Open to edit" : "Open")
    return null
  }
  const report = el(
    "div",
    { "data-testid": "report" },
    order.length === 0 ? el("p", { class: "empty", text: "No placed memories." }) : order.map((key) => {
      const rows = groups.get(key)!
      const meaning = key === "composed" ? "Composed into the prefix." : (reasonOf(key)?.[0] ?? key)
      return el(
        "details",
        { class: "card", open: rank(key) < 2, "data-group": key },
        el("summary", {}, (key === "composed" ? "composed" : "declined: " + key) + " (" + rows.length + ")"),
        el("p", { class: "muted", text: meaning }),
        el(
          "ul",
          { class: "chain" },
          rows.map((o) => {
            const record = records.get(o.recordId)
            const fix = fixOf(o, record)
            return el(
              "li",
              {
                "data-id": o.recordId,
                "data-status": o.status,
                "data-reason": o.status === "declined" ? o.reason : ""
              },
              shortId(o.recordId),
              " ",
              record
                ? link(memoryHref(o.recordId), record.content)
                : el("span", { class: "muted", text: "(not visible to this token)" }),
              record && record.label ? [" ", pill(record.label)] : null,
              o.address
                ? el("span", { class: "muted", text: " → " + o.address.section + " / " + o.address.key })
                : null,
              fix ? el("div", { class: "toolbar", "data-testid": "row-fix" }, fix) : null
            )
          })
        )
      )
    })
  )
  main.append(
    el("p", {
      text: "Spec " + (agent.spec || "none") + " · " + agent.composedIds.length +
        " memories composed · blue fragments come from memory (each links to its record), grey are authored."
    }),
    prefix,
    el("h2", { text: "Overlay report" }),
    report
  )
}
