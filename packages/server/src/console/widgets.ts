/**
 * The pieces several views share: the live status line, short ids, state pills, tables that
 * stack on a phone, where a record composes, and the per-section budget chart.
 */
import type * as Answers from "./answers.js"
import { messageOf, state } from "./client.js"
import { $, type Attributes, type Child, el } from "./dom.js"

/**
 * The live status line every view reports its results in (read out by screen readers). A message
 * announced just before a view re-renders is carried to the new view's status line.
 */
/**
 * Every kind a record may have, in the order the forms and filters offer them: core's
 * `MemoryRecord.MemoryKind`, handed to the bundle by the console's build (`consoleBuild.ts`
 * defines `ENGRAM_MEMORY_KINDS`), as the browser bundle takes no values from core.
 */
export const KINDS: ReadonlyArray<Answers.MemoryKind> = ENGRAM_MEMORY_KINDS
declare const ENGRAM_MEMORY_KINDS: ReadonlyArray<Answers.MemoryKind>

export const announce = (message: string, kind = "ok"): void => {
  state.flash = { message, kind }
  const node = $("#status")
  if (node === null) return
  node.className = "status " + kind
  node.textContent = message
}

/** A failed request, in place of the view's content. */
export const errorBox = (error: unknown): HTMLParagraphElement =>
  el("p", { class: "error", role: "alert", text: messageOf(error) })

/** The answer of `request`; when it fails, `undefined`, with the failure shown at the end of `main`. */
export const orShow = async <A>(main: HTMLElement, request: Promise<A>): Promise<A | undefined> => {
  try {
    return await request
  } catch (e) {
    main.append(errorBox(e))
    return undefined
  }
}

/**
 * An id as the console prints it where space is short: whole up to 12 characters (`mem-000001`,
 * which a cut to 8 would make `mem-0000` for ten ids), else its first 8 and an ellipsis (a UUID).
 */
export const idText = (id: string): string => id.length <= 12 ? id : id.slice(0, 8) + "…"

/** A list of ids in a line: the first `shown`, then how many more, so 150 ids stay one short line. */
export const idsText = (ids: ReadonlyArray<string>, shown = 5): string =>
  ids.slice(0, shown).map(idText).join(", ") +
  (ids.length > shown ? " and " + (ids.length - shown) + " more (" + ids.length + ")" : "")

/** An id shown short; the full id on hover and in the clipboard on click. */
export const shortId = (id: string): HTMLButtonElement =>
  el("button", {
    type: "button",
    class: "id",
    title: id,
    "data-full-id": id,
    "aria-label": "copy id " + id,
    text: idText(id),
    onclick: async (event) => {
      event.stopPropagation()
      try {
        await navigator.clipboard.writeText(id)
        announce("Copied " + id)
      } catch {
        announce("Id: " + id)
      }
    }
  })

/** A pill whose class is its text (a lifecycle state, a verdict…). */
export const pill = (text: string): HTMLSpanElement => el("span", { class: "pill " + text, text })

/** The lifecycle pill, and the flag beside it when the poisoning screen flags the record. */
export const statePills = (lifecycle: string, flagged: boolean): Child => [
  pill(lifecycle),
  flagged ? pill("flagged") : null
]

/** A trust tier with its meaning. */
export const trustText = (tier: number): string => tier === 3 ? "3 operator" : tier === 2 ? "2 agent" : "1 external"

/** How long ago `iso` was, in the largest whole unit (days, hours, minutes). */
export const age = (iso: string): string => {
  const ms = Date.now() - Date.parse(iso)
  const days = Math.floor(ms / 86400000)
  if (days >= 1) return days + " d"
  const hours = Math.floor(ms / 3600000)
  return hours >= 1 ? hours + " h" : Math.max(0, Math.floor(ms / 60000)) + " min"
}

/** The signed-in token's scopes (a view renders only once signed in). */
export const scopes = (): ReadonlyArray<string> => state.access?.scopes ?? []

/** A select's options, `selected` marked, after an empty option titled `any` when one is given. */
export const options = (values: ReadonlyArray<string>, selected: string | null, any: string | null): Child => [
  any ? el("option", { value: "", text: any }) : null,
  values.map((v) => el("option", { value: v, text: v, selected: v === selected }))
]

/** The scope field of a form: the token's scopes, with "all" first when `any` and it holds several. */
export const scopeField = (selected: string | null, name = "scope", any = true): HTMLLabelElement =>
  el(
    "label",
    {},
    "scope",
    el(
      "select",
      { name, "data-testid": "scope" },
      options(scopes(), selected, any && scopes().length > 1 ? "all" : null)
    )
  )

/** The address of a memory's view. */
export const memoryHref = (id: string): string => "#/memory/" + encodeURIComponent(id)

/**
 * A table column: its header (text, or a node such as a sort button), the cell of a row (a node
 * or text), and the header cell's attributes.
 */
export type Column<Row> = readonly [
  head: string | HTMLElement,
  cell: (row: Row) => Child,
  attributes?: Attributes | undefined
]

/**
 * A table that reads as a table on a wide screen and as one card per row on a phone. A header
 * may be a node (a sort button); each cell is labelled with its column's header text.
 */
export const table = <Row>(
  columns: ReadonlyArray<Column<Row>>,
  rows: ReadonlyArray<Row>,
  rowAttributes: (row: Row, index: number) => Attributes = () => ({}),
  caption?: string
): HTMLDivElement =>
  el(
    "div",
    { class: "scroll" },
    el(
      "table",
      { class: "stack" },
      caption ? el("caption", { class: "muted", text: caption }) : null,
      el(
        "thead",
        {},
        el("tr", {}, columns.map(([head, , attributes]) => el("th", { scope: "col", ...attributes }, head)))
      ),
      el(
        "tbody",
        {},
        rows.map((row, i) =>
          el(
            "tr",
            rowAttributes(row, i),
            columns.map(([head, cell]) => {
              const value = cell(row)
              return el(
                "td",
                { "data-label": typeof head === "string" ? head : head.textContent },
                typeof value === "string" ? document.createTextNode(value) : value
              )
            })
          )
        )
      )
    )
  )

/** Where a record composes, from its promotion rows. */
export const placementText = (promotions: ReadonlyArray<Answers.PromotionRow>): string => {
  if (promotions.length === 0) return "recall only (no promotion row)"
  return promotions.map((p) =>
    p.placement ? p.placement.section + " / " + p.placement.key + " (" + p.tier + ")" : "declined by " + p.specKey
  ).join("; ")
}

/** A budget in its own unit. */
export const budgetUse = (b: Answers.BudgetSummary): string =>
  b.budgetTokens != null
    ? "used " + b.usedTokens + " of " + b.budgetTokens + " tokens (" + b.usedChars + " chars)"
    : b.budgetChars != null
    ? "used " + b.usedChars + " of " + b.budgetChars + " chars (" + b.usedTokens + " tokens)"
    : "used " + b.usedTokens + " tokens (" + b.usedChars + " chars) of an unbounded budget"

/**
 * The budget per section as bars: what each section delivered (solid) beside what the budget
 * shed from it (hatched), in characters, so the two can be compared on one scale.
 */
export const budgetChart = (
  sections: ReadonlyArray<Answers.SectionReport>,
  budget: Answers.BudgetSummary
): HTMLElement => {
  const shedBy = new Map<string, { chars: number; items: Array<string> }>()
  for (const item of budget.shed) {
    const seen = shedBy.get(item.section) || { chars: 0, items: [] }
    seen.chars += item.chars
    seen.items.push(item.ref)
    shedBy.set(item.section, seen)
  }
  const widest = Math.max(1, ...sections.map((s) => s.chars + (shedBy.get(s.label)?.chars || 0)))
  const bar = (cls: string, chars: number) => {
    const span = el("span", { class: cls })
    span.style.width = (100 * chars / widest).toFixed(2) + "%"
    return span
  }
  return el(
    "figure",
    { class: "chart", "data-testid": "budget-chart", "aria-label": "budget per section" },
    el("figcaption", { "data-testid": "budget-use", text: budgetUse(budget) }),
    sections.map((s) => {
      const cut = shedBy.get(s.label)
      return el(
        "div",
        { class: "row", "data-section": s.label, "data-shed": cut ? String(cut.items.length) : "0" },
        el("span", { text: s.label }),
        el(
          "div",
          {
            class: "bar",
            role: "img",
            "aria-label": s.label + ": " + s.chars + " chars delivered" + (cut ? ", " + cut.chars + " chars shed" : "")
          },
          bar("used", s.chars),
          cut ? bar("cut", cut.chars) : null
        ),
        el("span", {
          class: "note",
          // Every id in full on hover; the line itself shows five and a count.
          title: [...(cut ? cut.items : []), ...s.memoryIds].join(", "),
          "data-shed-ids": cut ? cut.items.join(" ") : "",
          text: s.status + " · " + s.tokens + " tokens, " + s.chars + " chars, " + s.items + " items" +
            (cut ? " · shed " + cut.items.length + " (" + cut.chars + " chars): " + idsText(cut.items) : "") +
            (s.memoryIds.length ? " · memories " + idsText(s.memoryIds) : "")
        })
      )
    }),
    budget.withheld.length
      ? el("p", {
        class: "muted",
        text: "withheld before budgeting: " +
          budget.withheld.slice(0, 5).map((w) => idText(w.ref) + " (" + w.reason + ")").join(", ") +
          (budget.withheld.length > 5
            ? " and " + (budget.withheld.length - 5) + " more (" + budget.withheld.length + ")"
            : "")
      })
      : null,
    budget.suppressed.length
      ? el("p", { class: "muted", text: "not composed in this mode: " + budget.suppressed.join(", ") })
      : null
  )
}
