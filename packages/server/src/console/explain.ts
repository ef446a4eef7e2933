/**
 * The explain view: for one memory — across every stored call, or one session's, or one call —
 * the verdict of each call (composed, delivered with its rank and the query's words it matched,
 * shed, withheld, declined, excluded by mode or scope, not recalled), the reason `explain` gives,
 * and the fix where one exists.
 */
import type * as Answers from "./answers.js"
import { api, messageOf, writable } from "./client.js"
import { type Child, el, form, link, nodes } from "./dom.js"
import type { Go } from "./router.js"
import { announce, errorBox, idText, memoryHref, pill } from "./widgets.js"

/** What an operator can do about a verdict: the advice, and the action that takes it (if any). */
type Fix = readonly [advice: string, action: Child]

const fixOf = (
  call: Answers.CallExplanation,
  record: Answers.Explanation["record"],
  memoryId: string,
  go: Go
): Fix | null => {
  const confirm = writable() && record && record.reviewState !== "confirmed" && record.deliverableNow !== false
    ? el("button", {
      type: "button",
      class: "primary",
      "data-testid": "fix-confirm",
      text: "Confirm it",
      onclick: async () => {
        try {
          await api.review(memoryId, { state: "confirmed" })
          announce("Confirmed " + memoryId)
          go(memoryHref(memoryId), true)
        } catch (e) {
          announce(messageOf(e), "error")
        }
      }
    })
    : null
  const edit = writable() ? link(memoryHref(memoryId), "Edit its text") : null
  switch (call.verdict) {
    case "composed":
    case "delivered":
      return null
    case "not-recalled":
      return [
        "None of the query's words matched it well enough to be recalled: edit its text to use the words operators ask with, and it will be.",
        edit
      ]
    case "shed":
      return [
        "The budget shed it (lowest ranked first): a larger projection budget, or fewer higher-ranked memories, would keep it.",
        null
      ]
    case "withheld":
      if (call.withheld && call.withheld.reason === "not-deliverable") {
        return ["It was not deliverable then (rejected, expired or superseded).", null]
      }
      if (call.withheld && call.withheld.reason === "on-demand") {
        return ["Its delivery policy is on_demand: it reaches a model only through memory_recall.", null]
      }
      return ["Another record or the prefix held its place.", null]
    case "declined": {
      const declined = call.overlay && call.overlay.status === "declined" ? call.overlay : null
      if (declined && (declined.reason === "review-required" || declined.reason === "flagged")) {
        return ["The section composes only confirmed memories.", confirm]
      }
      return ["The overlay declined it (" + (declined ? declined.reason : "see reason") + ").", null]
    }
    case "excluded-by-scope":
      return ["The call read other scopes than this memory's.", null]
    case "excluded-by-mode":
      return ["This call's mode does not compose the section it would be delivered by.", null]
    default:
      return null
  }
}

const callCard = (c: Answers.CallExplanation, explanation: Answers.Explanation, go: Go): HTMLLIElement => {
  const fix = fixOf(c, explanation.record, explanation.memoryId, go)
  const where = c.projection
    ? c.projection.section +
      (c.projection.section === "recalled_memory"
        ? ", rank " + c.projection.position
        : ", position " + c.projection.position)
    : c.prefix
    ? "prefix section " + c.prefix.section
    : null
  return el(
    "li",
    { class: "card", "data-call": c.sessionId + "/" + c.turn + "." + c.call, "data-verdict": c.verdict },
    el(
      "h3",
      {},
      pill(c.verdict),
      " ",
      link(
        "#/call/" + encodeURIComponent(c.sessionId) + "/" + c.turn + "/" + c.call,
        c.sessionId + " · turn " + c.turn + ", call " + c.call
      ),
      " ",
      el("span", { class: "muted", text: c.mode + " mode" })
    ),
    el("p", { "data-testid": "reason", text: c.reason }),
    el(
      "dl",
      {},
      where ? [el("dt", { text: "where" }), el("dd", { text: where })] : null,
      c.queryTokens
        ? [
          el("dt", { text: "matched words" }),
          el("dd", { "data-testid": "matched", text: c.queryTokens.length ? c.queryTokens.join(", ") : "none" })
        ]
        : null,
      c.shed
        ? [el("dt", { text: "shed" }), el("dd", { text: c.shed.section + " (" + c.shed.chars + " chars)" })]
        : null,
      c.withheld
        ? [el("dt", { text: "withheld" }), el("dd", { text: c.withheld.section + ": " + c.withheld.reason })]
        : null,
      c.suppressed.length
        ? [el("dt", { text: "not composed in mode" }), el("dd", { text: c.suppressed.join(", ") })]
        : null,
      c.inScope !== null
        ? [el("dt", { text: "in the scopes read" }), el("dd", { text: c.inScope ? "yes" : "no" })]
        : null
    ),
    fix
      ? el(
        "div",
        { class: "toolbar", "data-testid": "fix" },
        el("strong", { text: "Fix: " }),
        el("span", { text: fix[0] }),
        fix[1]
      )
      : null
  )
}

/** Any session the token sees, to ask why the memory did not reach its calls. */
const sessionPicker = (memoryId: string, go: Go): HTMLFormElement => {
  const picker = form(
    { class: "inline", "data-testid": "explain-session" },
    (data) =>
      go("#/explain/" + encodeURIComponent(memoryId) + "?session=" + encodeURIComponent(String(data.get("session"))))
  )
  api.sessions().then(({ sessions }) => {
    if (sessions.length === 0) return
    picker.append(
      el(
        "label",
        {},
        "explain for session",
        el("select", { name: "session" }, sessions.map((s) => el("option", { value: s.sessionId, text: s.sessionId })))
      ),
      el("button", { type: "submit", text: "Explain" })
    )
  }, () => {})
  return picker
}

/** The record now: deliverable or not, flagged, where it was drawn from; or when it was forgotten. */
const recordNow = (x: Answers.Explanation): Child => {
  const r = x.record
  if (r) {
    return el(
      "p",
      {},
      "Now: ",
      pill(r.deliverableNow ? "deliverable" : "not deliverable"),
      " ",
      r.flagged ? [pill("flagged"), " " + r.flaggedFor.join("; ")] : null,
      r.source
        ? [
          " · drawn from ",
          link("#/session/" + encodeURIComponent(r.source.session), "session " + r.source.session),
          r.source.turns ? " turns " + r.source.turns.first + "–" + r.source.turns.last : ""
        ]
        : null,
      r.proposesToSupersede
        ? [" · proposes to replace ", link(memoryHref(r.proposesToSupersede), idText(r.proposesToSupersede))]
        : null,
      r.validity ? el("span", { "data-testid": "explain-validity", text: " · valid " + r.validity }) : null,
      r.corroboration
        ? el("span", { "data-testid": "explain-corroboration", text: " · " + r.corroboration.text })
        : null
    )
  }
  return x.tombstone
    ? el("p", { text: "Forgotten at " + x.tombstone.forgottenAt + " by " + x.tombstone.forgottenBy })
    : null
}

/** The verdicts for one memory; with session (and turn, call) in params, for those calls only. */
export const explainPanel = (memoryId: string, params: URLSearchParams, go: Go): HTMLDivElement => {
  const out = el("div", { "data-testid": "explain" }, el("p", { class: "muted", text: "Loading…" }))
  const query = new URLSearchParams()
  for (const key of ["session", "turn", "call"]) {
    const value = params.get(key)
    if (value) query.set(key, value)
  }
  api.explain(memoryId, query).then((x) => {
    // With a session every call is a card; across all sessions, the calls that reached the model
    // are, and the others are counted by verdict per session (a link lists a session's calls).
    const oneSession = query.has("session")
    const cards = oneSession ? x.calls : x.calls.filter((c) => c.reached)
    const others = oneSession ? [] : x.calls.filter((c) => !c.reached)
    const bySession = new Map<string, Map<string, number>>()
    for (const c of others) {
      const counts = bySession.get(c.sessionId) ?? new Map<string, number>()
      counts.set(c.verdict, (counts.get(c.verdict) ?? 0) + 1)
      bySession.set(c.sessionId, counts)
    }
    out.replaceChildren(...nodes(
      recordNow(x),
      x.routing.length
        ? el("p", {
          "data-testid": "routing",
          text: "Routing: " +
            x.routing.map((p) =>
              p.specKey + " → " +
              (p.promoted ? p.section + " / " + p.key + " (" + (p.tier ?? "no tier") + ")" : "declined")
            ).join("; ")
        })
        : null,
      oneSession ? null : el("p", {
        "data-testid": "delivered-in",
        text: x.sessions.length === 0
          ? x.calls.length === 0
            ? "Delivered in: no stored call — no session's snapshots or injection log name it."
            : "Delivered in: no stored call."
          : "Delivered in: " + x.sessions.map((s) => s.sessionId + " (turns " + s.turns.join(", ") + ")").join("; ")
      }),
      cards.length === 0
        ? null
        : el("ol", { class: "chain", "data-testid": "calls" }, cards.map((c) => callCard(c, x, go))),
      others.length === 0 ? null : el(
        "details",
        { "data-testid": "not-reached" },
        el("summary", {
          text: "Not reached in " + others.length + (cards.length > 0 ? " other" : "") + " stored call(s)"
        }),
        el(
          "ul",
          {},
          [...bySession].map(([sessionId, counts]) =>
            el(
              "li",
              {},
              link(
                "#/explain/" + encodeURIComponent(memoryId) + "?session=" + encodeURIComponent(sessionId),
                sessionId
              ),
              ": " + [...counts].map(([verdict, n]) => verdict + " " + n).join(", ")
            )
          )
        )
      ),
      oneSession && x.calls.length === 0
        ? el("p", { class: "empty", "data-testid": "no-calls", text: "No stored call of this session matches." })
        : null,
      oneSession ? null : sessionPicker(memoryId, go)
    ))
  }, (e: unknown) => out.replaceChildren(errorBox(e)))
  return out
}

/** `#/explain/<id>?session=&turn=&call=`: the explain panel under its heading. */
export const explainView = (main: HTMLElement, memoryId: string, params: URLSearchParams, go: Go): void => {
  const session = params.get("session")
  const turn = params.get("turn")
  const call = params.get("call")
  const scope = session
    ? "session " + session + (turn ? ", turn " + turn : "") + (call ? ", call " + call : "")
    : "every stored call"
  main.append(
    el("h1", { tabindex: "-1", text: "Explain" }),
    el("p", {}, "Why memory ", link(memoryHref(memoryId), memoryId), " was or was not delivered, in " + scope + "."),
    explainPanel(memoryId, params, go)
  )
}
