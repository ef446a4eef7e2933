/**
 * The console's shared module (`/console/dom.js`): building DOM nodes (every store value goes in
 * as text, never as markup), the API client with the signed-in token, the live status line, and
 * the widgets several views use — short ids, state pills, tables that stack on a phone, the
 * per-section budget chart.
 */
export const dom = String.raw`
export const $ = (sel, root = document) => root.querySelector(sel)

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag)
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue
    if (key === "text") node.textContent = value
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value)
    else node.setAttribute(key, value === true ? "" : value)
  }
  for (const child of children.flat(Infinity)) if (child !== null && child !== undefined && child !== false) node.append(child)
  return node
}

export const state = { token: sessionStorage.getItem("engram-token"), access: null, flash: null }
export const writable = () => state.access !== null && !state.access.readOnly

export async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { authorization: "Bearer " + state.token, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined
  })
  const json = await response.json().catch(() => ({}))
  if (response.status === 401) {
    sessionStorage.removeItem("engram-token")
    state.token = null
    state.access = null
    window.dispatchEvent(new CustomEvent("engram-signed-out", { detail: json.message }))
  }
  if (!response.ok) throw new Error(json.message || ("HTTP " + response.status))
  return json
}

/**
 * The live status line every view reports its results in (read out by screen readers). A message
 * announced just before a view re-renders is carried to the new view's status line.
 */
export function announce(message, kind = "ok") {
  state.flash = { message, kind }
  const node = $("#status")
  if (node === null) return
  node.className = "status " + kind
  node.textContent = message
}

export const errorBox = (e) => el("p", { class: "error", role: "alert", text: e.message })

/** An id shown short; the full id on hover and in the clipboard on click. */
export function shortId(id) {
  return el("button", { type: "button", class: "id", title: id, "data-full-id": id, "aria-label": "copy id " + id,
    text: id.length > 12 ? id.slice(0, 8) + "…" : id,
    onclick: async (event) => {
      event.stopPropagation()
      try { await navigator.clipboard.writeText(id); announce("Copied " + id) } catch { announce("Id: " + id) }
    } })
}

export const pill = (text) => el("span", { class: "pill " + text, text })

/** The lifecycle pill, and the flag beside it when the poisoning screen flags the record. */
export const statePills = (state, flagged) => [pill(state), flagged ? pill("flagged") : null]

export const trustText = (tier) => tier === 3 ? "3 operator" : tier === 2 ? "2 agent" : "1 external"

export function age(iso) {
  const ms = Date.now() - Date.parse(iso)
  const days = Math.floor(ms / 86400000)
  if (days >= 1) return days + " d"
  const hours = Math.floor(ms / 3600000)
  return hours >= 1 ? hours + " h" : Math.max(0, Math.floor(ms / 60000)) + " min"
}

export const link = (href, text, attrs = {}) => el("a", { href, ...attrs, text })
export const memoryHref = (id) => "#/memory/" + encodeURIComponent(id)

/**
 * A table that reads as a table on a wide screen and as one card per row on a phone. Each column
 * is [header, cell(row) → node|string, attrs?]; a header may be a node (a sort button).
 */
export function table(columns, rows, rowAttrs = () => ({}), caption) {
  return el("div", { class: "scroll" }, el("table", { class: "stack" },
    caption ? el("caption", { class: "muted", text: caption }) : null,
    el("thead", {}, el("tr", {}, columns.map(([head, , attrs]) => el("th", { scope: "col", ...(attrs || {}) }, head)))),
    el("tbody", {}, rows.map((row, i) => el("tr", rowAttrs(row, i), columns.map(([head, cell]) => {
      const value = cell(row)
      return el("td", { "data-label": typeof head === "string" ? head : head.textContent }, typeof value === "string" ? document.createTextNode(value) : value)
    }))))))
}

/** Where a record composes, from its promotion rows. */
export function placementText(promotions) {
  if (promotions.length === 0) return "recall only (no promotion row)"
  return promotions.map((p) => p.placement ? p.placement.section + " / " + p.placement.key + " (" + p.tier + ")" : "declined by " + p.specKey).join("; ")
}

/** A budget in its own unit. */
export function budgetUse(b) {
  return b.budgetTokens != null ? "used " + b.usedTokens + " of " + b.budgetTokens + " tokens (" + b.usedChars + " chars)"
    : b.budgetChars != null ? "used " + b.usedChars + " of " + b.budgetChars + " chars (" + b.usedTokens + " tokens)"
    : "used " + b.usedTokens + " tokens (" + b.usedChars + " chars) of an unbounded budget"
}

/**
 * The budget per section as bars: what each section delivered (solid) beside what the budget
 * shed from it (hatched), in characters, so the two can be compared on one scale.
 */
export function budgetChart(sections, budget) {
  const shedBy = new Map()
  for (const item of budget.shed) {
    const seen = shedBy.get(item.section) || { chars: 0, items: [] }
    seen.chars += item.chars
    seen.items.push(item.ref)
    shedBy.set(item.section, seen)
  }
  const widest = Math.max(1, ...sections.map((s) => s.chars + (shedBy.get(s.label)?.chars || 0)))
  const bar = (cls, chars) => {
    const span = el("span", { class: cls })
    span.style.width = (100 * chars / widest).toFixed(2) + "%"
    return span
  }
  return el("figure", { class: "chart", "data-testid": "budget-chart", "aria-label": "budget per section" },
    el("figcaption", { "data-testid": "budget-use", text: budgetUse(budget) }),
    sections.map((s) => {
      const cut = shedBy.get(s.label)
      return el("div", { class: "row", "data-section": s.label, "data-shed": cut ? String(cut.items.length) : "0" },
        el("span", { text: s.label }),
        el("div", { class: "bar", role: "img", "aria-label": s.label + ": " + s.chars + " chars delivered" + (cut ? ", " + cut.chars + " chars shed" : "") },
          bar("used", s.chars), cut ? bar("cut", cut.chars) : null),
        el("span", { class: "note", text: s.status + " · " + s.tokens + " tokens, " + s.chars + " chars, " + s.items + " items" +
          (cut ? " · shed " + cut.items.length + " (" + cut.chars + " chars): " + cut.items.join(", ") : "") +
          (s.memoryIds.length ? " · memories " + s.memoryIds.map((id) => id.slice(0, 8)).join(", ") : "") }))
    }),
    budget.withheld.length ? el("p", { class: "muted", text: "withheld before budgeting: " + budget.withheld.map((w) => w.ref.slice(0, 8) + " (" + w.reason + ")").join(", ") }) : null,
    budget.suppressed.length ? el("p", { class: "muted", text: "not composed in this mode: " + budget.suppressed.join(", ") }) : null)
}
`
