/**
 * The review queue (`/console/review.js`): only what a review can still change (pending, not
 * expired, not superseded), oldest first, with source, trust tier, label, age and where each
 * would compose; bulk confirm and reject; keyboard navigation (arrows or j/k move, space or x
 * selects, c confirms, r rejects the selection — or the focused row when nothing is selected).
 */
export const review = String.raw`
import { el, api, announce, errorBox, shortId, statePills, trustText, age, link, memoryHref, placementText, writable } from "./dom.js"

export async function reviewView(main, params, go) {
  main.append(el("h1", { tabindex: "-1", text: "Review queue" }),
    el("p", { class: "muted" }, "Pending memories that a review can still change; guarded sections compose only confirmed ones. Keys: ",
      el("kbd", { text: "↑" }), "/", el("kbd", { text: "↓" }), " or ", el("kbd", { text: "j" }), "/", el("kbd", { text: "k" }), " move, ",
      el("kbd", { text: "space" }), " or ", el("kbd", { text: "x" }), " select, ", el("kbd", { text: "c" }), " confirm, ", el("kbd", { text: "r" }), " reject."))
  let page
  try { page = await api("GET", "/api/memories/browse?state=pending&sort=created&order=asc&limit=200") } catch (e) { main.append(errorBox(e)); return }
  if (page.total === 0) { main.append(el("p", { class: "empty", "data-testid": "empty", text: "Nothing waits for review." })); return }
  const selected = new Set()
  const count = el("span", { "data-testid": "selected-count", "aria-live": "polite", text: "0 selected" })
  const canWrite = writable()
  const decide = async (to) => {
    const focused = document.activeElement && document.activeElement.closest ? document.activeElement.closest("tr[data-id]") : null
    const ids = selected.size > 0 ? [...selected] : focused ? [focused.dataset.id] : []
    if (ids.length === 0) { announce("Select memories first (space or x on a row)", "error"); return }
    try {
      await api("POST", "/api/memories/review", { ids, state: to })
      announce((to === "confirmed" ? "Confirmed " : "Rejected ") + ids.length + (ids.length === 1 ? " memory" : " memories"))
      go("#/review", true)
    } catch (e) { announce(e.message, "error") }
  }
  const all = el("input", { type: "checkbox", "aria-label": "select all", "data-testid": "select-all", onchange: (e) => {
    for (const row of rows) setSelected(row, e.target.checked)
  } })
  const toolbar = canWrite ? el("div", { class: "toolbar", role: "toolbar", "aria-label": "review selected" },
    el("label", { class: "check" }, all, "all " + page.total), count,
    el("button", { type: "button", class: "primary", "data-testid": "bulk-confirm", text: "Confirm selected", onclick: () => decide("confirmed") }),
    el("button", { type: "button", "data-testid": "bulk-reject", text: "Reject selected", onclick: () => decide("rejected") })) : null
  const rows = []
  function setSelected(row, on) {
    const id = row.dataset.id
    if (on) selected.add(id); else selected.delete(id)
    row.setAttribute("aria-selected", on ? "true" : "false")
    row.querySelector("input[type=checkbox]").checked = on
    count.textContent = selected.size + " selected"
  }
  const tbody = el("tbody", {}, page.rows.map((r, i) => {
    const box = el("input", { type: "checkbox", "aria-label": "select " + r.record.content.slice(0, 60), disabled: !canWrite,
      onchange: (e) => setSelected(row, e.target.checked) })
    const row = el("tr", { class: "focus-row", tabindex: i === 0 ? "0" : "-1", "data-id": r.record.id, "aria-selected": "false" },
      el("td", { "data-label": "select" }, box),
      el("td", { "data-label": "content" }, link(memoryHref(r.record.id), r.record.content), " ", statePills(r.state, r.flagged)),
      el("td", { "data-label": "label", text: r.record.label || "—" }),
      el("td", { "data-label": "source", text: r.record.sourceType }),
      el("td", { "data-label": "trust", text: trustText(r.trustTier) }),
      el("td", { "data-label": "age", text: age(r.record.createdAt) }),
      el("td", { "data-label": "would compose", "data-testid": "would-compose", text: placementText(r.promotions) }),
      el("td", { "data-label": "id" }, shortId(r.record.id)))
    rows.push(row)
    return row
  }))
  const move = (from, by) => {
    const next = rows[Math.max(0, Math.min(rows.length - 1, rows.indexOf(from) + by))]
    from.tabIndex = -1
    next.tabIndex = 0
    next.focus()
  }
  tbody.addEventListener("keydown", (e) => {
    const row = e.target.closest("tr[data-id]")
    if (!row || (e.target.tagName === "INPUT" && e.key !== "ArrowDown" && e.key !== "ArrowUp")) return
    if (e.key === "ArrowDown" || e.key === "j") { e.preventDefault(); move(row, 1) }
    else if (e.key === "ArrowUp" || e.key === "k") { e.preventDefault(); move(row, -1) }
    else if (canWrite && (e.key === " " || e.key === "x")) { e.preventDefault(); setSelected(row, !selected.has(row.dataset.id)) }
    else if (canWrite && e.key === "c") { e.preventDefault(); decide("confirmed") }
    else if (canWrite && e.key === "r") { e.preventDefault(); decide("rejected") }
  })
  main.append(toolbar, el("p", { "data-testid": "total", text: page.total + " waiting" }),
    el("div", { class: "scroll", "data-testid": "queue" }, el("table", { class: "stack" },
      el("thead", {}, el("tr", {}, ["select", "content", "label", "source", "trust", "age", "would compose", "id"].map((h) => el("th", { scope: "col", text: h })))),
      tbody)))
}
`
