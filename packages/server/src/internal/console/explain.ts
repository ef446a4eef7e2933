/**
 * The explain view (`/console/explain.js`): for one memory — across the sessions that logged it,
 * or for one stored call — the verdict of each call (composed, delivered with its rank and the
 * query's words it matched, shed, withheld, declined, excluded by mode or scope, not recalled),
 * the reason `explain` gives, and the fix where one exists.
 */
export const explain = String.raw`
import { el, api, announce, errorBox, pill, link, memoryHref, writable } from "./dom.js"

/** What an operator can do about a verdict: [text, action?]. */
function fixOf(call, record, memoryId, go) {
  const confirm = writable() && record && record.reviewState !== "confirmed" && record.deliverableNow !== false
    ? el("button", { type: "button", class: "primary", "data-testid": "fix-confirm", text: "Confirm it", onclick: async () => {
        try { await api("POST", "/api/memories/" + memoryId + "/review", { state: "confirmed" }); announce("Confirmed " + memoryId); go(memoryHref(memoryId), true) }
        catch (e) { announce(e.message, "error") } } })
    : null
  const edit = writable() ? link(memoryHref(memoryId), "Edit its text") : null
  switch (call.verdict) {
    case "composed": case "delivered": return null
    case "not-recalled": return ["None of the query's words matched it well enough to be recalled; an edit that uses the words operators ask with would.", edit]
    case "shed": return ["The budget shed it (lowest ranked first): a larger projection budget, or fewer higher-ranked memories, would keep it.", null]
    case "withheld":
      if (call.withheld && call.withheld.reason === "not-deliverable") return ["It was not deliverable then (rejected, expired or superseded).", null]
      if (call.withheld && call.withheld.reason === "on-demand") return ["Its delivery policy is on_demand: it reaches a model only through memory_recall.", null]
      return ["Another record or the prefix held its place.", null]
    case "declined":
      if (call.overlay && (call.overlay.reason === "review-required" || call.overlay.reason === "flagged")) return ["The section composes only confirmed memories.", confirm]
      return ["The overlay declined it (" + (call.overlay ? call.overlay.reason : "see reason") + ").", null]
    case "excluded-by-scope": return ["The call read other scopes than this memory's.", null]
    case "excluded-by-mode": return ["This call's mode does not compose the section it would be delivered by.", null]
    default: return null
  }
}

function callCard(c, explanation, go) {
  const fix = fixOf(c, explanation.record, explanation.memoryId, go)
  const where = c.projection ? c.projection.section + (c.projection.section === "recalled_memory" ? ", rank " + c.projection.position : ", position " + c.projection.position) : c.prefix ? "prefix section " + c.prefix.section : null
  return el("li", { class: "card", "data-call": c.sessionId + "/" + c.turn + "." + c.call, "data-verdict": c.verdict },
    el("h3", {}, pill(c.verdict), " ", link("#/call/" + encodeURIComponent(c.sessionId) + "/" + c.turn + "/" + c.call, c.sessionId + " · turn " + c.turn + ", call " + c.call), " ", el("span", { class: "muted", text: c.mode + " mode" })),
    el("p", { "data-testid": "reason", text: c.reason }),
    el("dl", {},
      where ? [el("dt", { text: "where" }), el("dd", { text: where })] : null,
      c.queryTokens ? [el("dt", { text: "matched words" }), el("dd", { "data-testid": "matched", text: c.queryTokens.length ? c.queryTokens.join(", ") : "none" })] : null,
      c.shed ? [el("dt", { text: "shed" }), el("dd", { text: c.shed.section + " (" + c.shed.chars + " chars)" })] : null,
      c.withheld ? [el("dt", { text: "withheld" }), el("dd", { text: c.withheld.section + ": " + c.withheld.reason })] : null,
      c.suppressed.length ? [el("dt", { text: "not composed in mode" }), el("dd", { text: c.suppressed.join(", ") })] : null,
      c.inScope !== null ? [el("dt", { text: "in the scopes read" }), el("dd", { text: c.inScope ? "yes" : "no" })] : null),
    fix ? el("div", { class: "toolbar", "data-testid": "fix" }, el("strong", { text: "Fix: " }), el("span", { text: fix[0] }), fix[1]) : null)
}

/** Any session the token sees, to ask why the memory did not reach its calls. */
function sessionPicker(memoryId, go) {
  const form = el("form", { class: "inline", "data-testid": "explain-session", onsubmit: (e) => {
    e.preventDefault()
    go("#/explain/" + encodeURIComponent(memoryId) + "?session=" + encodeURIComponent(new FormData(form).get("session")))
  } })
  api("GET", "/api/sessions").then(({ sessions }) => {
    if (sessions.length === 0) return
    form.append(el("label", {}, "explain for session", el("select", { name: "session" }, sessions.map((s) => el("option", { value: s.sessionId, text: s.sessionId })))),
      el("button", { type: "submit", text: "Explain" }))
  }, () => {})
  return form
}

/** The verdicts for one memory; with session (and turn, call) in params, for those calls only. */
export function explainPanel(memoryId, params, go) {
  const out = el("div", { "data-testid": "explain" }, el("p", { class: "muted", text: "Loading…" }))
  const query = new URLSearchParams()
  for (const key of ["session", "turn", "call"]) if (params.get(key)) query.set(key, params.get(key))
  api("GET", "/api/memories/" + encodeURIComponent(memoryId) + "/explain?" + query).then((x) => {
    const r = x.record
    out.replaceChildren(
      r ? el("p", {}, "Now: ", pill(r.deliverableNow ? "deliverable" : "not deliverable"), " ", r.flagged ? [pill("flagged"), " " + r.flaggedFor.join("; ")] : null,
        r.source ? [" · drawn from ", link("#/session/" + encodeURIComponent(r.source.session), "session " + r.source.session),
          r.source.turns ? " turns " + r.source.turns.first + "–" + r.source.turns.last : ""] : null,
        r.proposesToSupersede ? [" · proposes to replace ", link(memoryHref(r.proposesToSupersede), r.proposesToSupersede.slice(0, 8))] : null)
        : x.tombstone ? el("p", { text: "Forgotten at " + x.tombstone.forgottenAt + " by " + x.tombstone.forgottenBy }) : null,
      x.routing.length ? el("p", { "data-testid": "routing", text: "Routing: " + x.routing.map((p) => p.specKey + " → " + (p.promoted ? p.section + " / " + p.key + " (" + p.tier + ")" : "declined")).join("; ") }) : null,
      x.calls.length === 0
        ? el("p", { class: "empty", "data-testid": "no-calls", text: x.sessions.length === 0 ? "No stored call names this memory: it has not been delivered or considered in any stored session." : "Pick a session to explain its calls:" })
        : el("ol", { class: "chain", "data-testid": "calls" }, x.calls.map((c) => callCard(c, x, go))),
      x.calls.length === 0 && x.sessions.length ? el("ul", { "data-testid": "sessions" }, x.sessions.map((s) => el("li", {},
        link("#/explain/" + encodeURIComponent(memoryId) + "?session=" + encodeURIComponent(s.sessionId), s.sessionId), " turns " + s.turns.join(", ")))) : null,
      x.calls.length === 0 ? sessionPicker(memoryId, go) : null)
  }, (e) => out.replaceChildren(errorBox(e)))
  return out
}

export function explainView(main, memoryId, params, go) {
  const scope = params.get("session") ? "session " + params.get("session") + (params.get("turn") ? ", turn " + params.get("turn") : "") + (params.get("call") ? ", call " + params.get("call") : "") : "every session that logged it"
  main.append(el("h1", { tabindex: "-1", text: "Explain" }),
    el("p", {}, "Why memory ", link(memoryHref(memoryId), memoryId), " was or was not delivered, in " + scope + "."),
    explainPanel(memoryId, params, go))
}
`
