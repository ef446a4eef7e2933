/**
 * The review queue: only what a review can still change (pending, not expired, not superseded),
 * oldest first, {@link REVIEW_PAGE} at a time with a pager, filtered by scope, kind and flag; with
 * source, trust tier, label, age and where each would compose; bulk confirm and reject; keyboard
 * navigation (arrows or j/k move, space or x selects, c confirms, r rejects the selection — or the
 * focused row when nothing is selected), which works from the page too, without tabbing into the
 * table: a key pressed outside any field acts on the focused row, else the first.
 */
import type * as Answers from "./answers.js"
import { api, messageOf, writable } from "./client.js"
import { el, form, link, nodes } from "./dom.js"
import type { Go } from "./router.js"
import {
  age,
  announce,
  KINDS,
  memoryHref,
  options,
  orShow,
  placementText,
  scopeField,
  shortId,
  statePills,
  trustText
} from "./widgets.js"

/** How many pending records a page of the queue shows. */
export const REVIEW_PAGE = 25

/** The queue's address with these filters and offset. */
const reviewHref = (filters: URLSearchParams, offset: number): string => {
  const query = new URLSearchParams(filters)
  if (offset > 0) query.set("offset", String(offset))
  const text = query.toString()
  return "#/review" + (text ? "?" + text : "")
}

/** `#/review?scope=&kind=&flagged=&offset=`: the pending records, oldest first, a page at a time. */
export const reviewView = async (main: HTMLElement, params: URLSearchParams, go: Go): Promise<void> => {
  const filters = new URLSearchParams()
  for (const key of ["scope", "kind", "flagged"]) {
    const value = params.get(key)
    if (value) filters.set(key, value)
  }
  const offset = Math.max(0, Math.floor(Number(params.get("offset") ?? "0")) || 0)
  const filterForm = form(
    { class: "inline", "data-testid": "review-filters", "aria-label": "filter the queue" },
    (data) => {
      const chosen = new URLSearchParams()
      for (const key of ["scope", "kind", "flagged"]) {
        const value = String(data.get(key) ?? "")
        if (value) chosen.set(key, value)
      }
      go(reviewHref(chosen, 0))
    },
    scopeField(filters.get("scope")),
    el("label", {}, "kind", el("select", { name: "kind" }, options(KINDS, filters.get("kind"), "any"))),
    el(
      "label",
      {},
      "flagged",
      el("select", { name: "flagged" }, options(["true", "false"], filters.get("flagged"), "either"))
    ),
    el("button", { type: "submit", text: "Filter" })
  )
  main.append(
    el("h1", { tabindex: "-1", text: "Review queue" }),
    el(
      "p",
      { class: "muted" },
      "Pending memories that a review can still change; guarded sections compose only confirmed ones. Keys: ",
      // Each key in brackets goes in a <kbd>; the words between them as text.
      "[↑]/[↓] or [j]/[k] move, [space] or [x] select, [c] confirm, [r] reject.".split(/\[([^\]]+)\]/)
        .map((part, i) => i % 2 === 1 ? el("kbd", { text: part }) : part)
        .filter((part) => part !== "")
    ),
    filterForm
  )
  const query = new URLSearchParams(filters)
  query.set("state", "pending")
  query.set("sort", "created")
  query.set("order", "asc")
  query.set("limit", String(REVIEW_PAGE))
  query.set("offset", String(offset))
  const page = await orShow(main, api.browse(query.toString()))
  if (page === undefined) return
  if (page.total === 0) {
    main.append(el("p", {
      class: "empty",
      "data-testid": "empty",
      text: filters.size > 0 ? "Nothing waits for review with these filters." : "Nothing waits for review."
    }))
    return
  }
  const selected = new Set<string>()
  const count = el("span", { "data-testid": "selected-count", "aria-live": "polite", text: "0 selected" })
  const canWrite = writable()
  const decide = async (to: Answers.ReviewState) => {
    const active = document.activeElement
    const focused = active ? active.closest<HTMLTableRowElement>("tr[data-id]") : null
    const ids = selected.size > 0 ? [...selected] : focused ? [focused.dataset.id!] : []
    if (ids.length === 0) {
      announce("Select memories first (space or x on a row)", "error")
      return
    }
    try {
      await api.reviewMany({ ids, state: to })
      announce(
        (to === "confirmed" ? "Confirmed " : "Rejected ") + ids.length + (ids.length === 1 ? " memory" : " memories")
      )
      go("#/review", true)
    } catch (e) {
      announce(messageOf(e), "error")
    }
  }
  const rows: Array<HTMLTableRowElement> = []
  const setSelected = (row: HTMLTableRowElement, on: boolean) => {
    const id = row.dataset.id!
    if (on) selected.add(id)
    else selected.delete(id)
    row.setAttribute("aria-selected", on ? "true" : "false")
    row.querySelector<HTMLInputElement>("input[type=checkbox]")!.checked = on
    count.textContent = selected.size + " selected"
  }
  const all: HTMLInputElement = el("input", {
    type: "checkbox",
    "aria-label": "select all",
    "data-testid": "select-all",
    onchange: () => {
      for (const row of rows) setSelected(row, all.checked)
    }
  })
  const toolbar = canWrite
    ? el(
      "div",
      { class: "toolbar", role: "toolbar", "aria-label": "review selected" },
      el("label", { class: "check" }, all, "all " + page.rows.length + " on this page"),
      count,
      el("button", {
        type: "button",
        class: "primary",
        "data-testid": "bulk-confirm",
        text: "Confirm selected",
        onclick: () => decide("confirmed")
      }),
      el("button", {
        type: "button",
        "data-testid": "bulk-reject",
        text: "Reject selected",
        onclick: () => decide("rejected")
      })
    )
    : null
  const tbody = el(
    "tbody",
    {},
    page.rows.map((r, i) => {
      const box: HTMLInputElement = el("input", {
        type: "checkbox",
        "aria-label": "select " + r.record.content.slice(0, 60),
        disabled: !canWrite,
        onchange: () => setSelected(row, box.checked)
      })
      const row = el(
        "tr",
        { class: "focus-row", tabindex: i === 0 ? "0" : "-1", "data-id": r.record.id, "aria-selected": "false" },
        el("td", { "data-label": "select" }, box),
        el(
          "td",
          { "data-label": "content" },
          link(memoryHref(r.record.id), r.record.content),
          " ",
          statePills(r.state, r.flagged)
        ),
        el("td", { "data-label": "label", text: r.record.label || "—" }),
        el("td", { "data-label": "source", text: r.record.sourceType }),
        el("td", { "data-label": "trust", text: trustText(r.trustTier) }),
        el("td", { "data-label": "age", text: age(r.record.createdAt) }),
        el("td", { "data-label": "would compose", "data-testid": "would-compose", text: placementText(r.promotions) }),
        el("td", { "data-label": "id" }, shortId(r.record.id))
      )
      rows.push(row)
      return row
    })
  )
  const move = (from: HTMLTableRowElement, by: number) => {
    const next = rows[Math.max(0, Math.min(rows.length - 1, rows.indexOf(from) + by))]!
    from.tabIndex = -1
    next.tabIndex = 0
    next.focus()
  }
  // One listener on the document: a key pressed in the table acts on its row; one pressed outside
  // any field (nothing focused, or the heading) acts on the row that had focus, else the first.
  const onKey = (e: KeyboardEvent) => {
    if (!tbody.isConnected) {
      document.removeEventListener("keydown", onKey)
      return
    }
    if (e.altKey || e.ctrlKey || e.metaKey) return
    const target = e.target
    if (!(target instanceof HTMLElement)) return
    const inRow = target.closest<HTMLTableRowElement>("tr[data-id]")
    const elsewhere = inRow === null && target.closest("input, select, textarea, button, a, summary, form") === null
    if (inRow === null && !elsewhere) return
    const row = inRow ?? rows.find((r) => r.tabIndex === 0) ?? rows[0]
    if (!row || (target.tagName === "INPUT" && e.key !== "ArrowDown" && e.key !== "ArrowUp")) return
    if (inRow === null && ["ArrowDown", "ArrowUp", "j", "k", " ", "x", "c", "r"].includes(e.key)) row.focus()
    if (e.key === "ArrowDown" || e.key === "j") {
      e.preventDefault()
      move(row, 1)
    } else if (e.key === "ArrowUp" || e.key === "k") {
      e.preventDefault()
      move(row, -1)
    } else if (canWrite && (e.key === " " || e.key === "x")) {
      e.preventDefault()
      setSelected(row, !selected.has(row.dataset.id!))
    } else if (canWrite && e.key === "c") {
      e.preventDefault()
      void decide("confirmed")
    } else if (canWrite && e.key === "r") {
      e.preventDefault()
      void decide("rejected")
    }
  }
  document.addEventListener("keydown", onKey)
  main.append(...nodes(
    toolbar,
    el("p", {
      "data-testid": "total",
      text: page.total + " waiting" +
        (page.total > page.rows.length
          ? " · showing " + (offset + 1) + "–" + (offset + page.rows.length)
          : "")
    }),
    el(
      "div",
      { class: "scroll", "data-testid": "queue" },
      el(
        "table",
        { class: "stack" },
        el(
          "thead",
          {},
          el(
            "tr",
            {},
            ["select", "content", "label", "source", "trust", "age", "would compose", "id"].map((h) =>
              el("th", { scope: "col", text: h })
            )
          )
        ),
        tbody
      )
    ),
    page.total > REVIEW_PAGE
      ? el(
        "nav",
        { class: "toolbar", "aria-label": "queue pages", "data-testid": "pager" },
        offset > 0
          ? link(reviewHref(filters, Math.max(0, offset - REVIEW_PAGE)), "← Older", { "data-testid": "page-prev" })
          : null,
        el("span", {
          text: "page " + (Math.floor(offset / REVIEW_PAGE) + 1) + " of " + Math.ceil(page.total / REVIEW_PAGE)
        }),
        offset + REVIEW_PAGE < page.total
          ? link(reviewHref(filters, offset + REVIEW_PAGE), "Newer →", { "data-testid": "page-next" })
          : null
      )
      : null
  ))
}
