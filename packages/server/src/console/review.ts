/**
 * The review queue: only what a review can still change (pending, not expired, not superseded),
 * oldest first, with source, trust tier, label, age and where each would compose; bulk confirm
 * and reject; keyboard navigation (arrows or j/k move, space or x selects, c confirms, r rejects
 * the selection — or the focused row when nothing is selected).
 */
import type * as Answers from "./answers.js"
import { api, messageOf, writable } from "./client.js"
import { el, link, nodes } from "./dom.js"
import type { Go } from "./router.js"
import { age, announce, memoryHref, orShow, placementText, shortId, statePills, trustText } from "./widgets.js"

/** `#/review`: the pending records, oldest first, reviewed one by one or in bulk, by keyboard or button. */
export const reviewView = async (main: HTMLElement, go: Go): Promise<void> => {
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
    )
  )
  const page = await orShow(main, api.browse("state=pending&sort=created&order=asc&limit=200"))
  if (page === undefined) return
  if (page.total === 0) {
    main.append(el("p", { class: "empty", "data-testid": "empty", text: "Nothing waits for review." }))
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
      el("label", { class: "check" }, all, "all " + page.total),
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
  tbody.addEventListener("keydown", (e) => {
    const target = e.target
    if (!(target instanceof HTMLElement)) return
    const row = target.closest<HTMLTableRowElement>("tr[data-id]")
    if (!row || (target.tagName === "INPUT" && e.key !== "ArrowDown" && e.key !== "ArrowUp")) return
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
  })
  main.append(...nodes(
    toolbar,
    el("p", { "data-testid": "total", text: page.total + " waiting" }),
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
    )
  ))
}
